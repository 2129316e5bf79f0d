import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import type { ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';
import { spawnOwned } from './owned-processes.mjs';

/**
 * Debian's Prometheus, which `.ci/run` installs. Outside CI a machine without it skips the tests that
 * need it (and says so); in CI its absence is a failure.
 */
export function prometheusPath(): string | null {
  const found = [process.env.PROMETHEUS_PATH, '/usr/bin/prometheus'].find((p): p is string => !!p && existsSync(p));
  if (found) return found;
  if (process.env.CI)
    throw new Error('Prometheus is required in CI: apt-get install -y prometheus (or set PROMETHEUS_PATH)');
  console.warn('Prometheus not found: skipping its tests (apt-get install -y prometheus, or set PROMETHEUS_PATH)');
  return null;
}

/** One series of an instant query's answer. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** The scrape configuration the platform ships (infra/prometheus/prometheus.yml). */
const SHIPPED_CONFIG = resolve(import.meta.dirname, '../../infra/prometheus/prometheus.yml');

interface ScrapeConfig {
  global: Record<string, string>;
  scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>;
}

/**
 * A Prometheus server of the test's own on loopback, with the shipped scrape configuration pointed at
 * `targets` (host:port) and scraping every second, keeping its data in a scratch folder it removes when
 * stopped.
 */
export class TestPrometheus {
  private constructor(
    private readonly proc: ChildProcess,
    private readonly dir: string,
    readonly url: string,
  ) {}

  static async start(binary: string, targets: readonly string[]): Promise<TestPrometheus> {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-prometheus-'));
    const config = parse(readFileSync(SHIPPED_CONFIG, 'utf8')) as ScrapeConfig;
    config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' };
    for (const job of config.scrape_configs) job.static_configs = [{ targets: [...targets] }];
    writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    const proc = spawnOwned(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const server = new TestPrometheus(proc, dir, `http://127.0.0.1:${port}`);
    for (let i = 0; ; i++) {
      if (proc.exitCode !== null) throw new Error(`prometheus exited at start: ${stderr}`);
      const ready = await fetch(`${server.url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return server;
      if (i > 600) throw new Error(`prometheus did not become ready: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An instant query's series; throws with Prometheus's own message when the expression is refused. */
  async query(expr: string): Promise<Sample[]> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: unknown };
    };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? res.status}`);
    const { resultType, result } = body.data!;
    if (resultType === 'scalar') return [{ metric: {}, value: result as [number, string] }];
    return result as Sample[];
  }

  /** Waits until every target has been scraped successfully at least once since `since` (ms). */
  async scrapedSince(since: number, timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await fetch(`${this.url}/api/v1/targets`);
      const body = (await res.json()) as {
        data: { activeTargets: Array<{ health: string; lastScrape: string; lastError: string }> };
      };
      const targets = body.data.activeTargets;
      if (targets.length && targets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > since)) return;
      if (Date.now() > until) throw new Error(`targets not scraped: ${JSON.stringify(targets)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
