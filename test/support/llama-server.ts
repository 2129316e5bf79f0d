import type { ChildProcess } from 'node:child_process';
import { llamaServerCache } from '../../libs/config/src/worker-config.js';
import { findLlamaServer } from '../../libs/engine/src/llama-server/llama-server-binary.js';
import { freePort } from './free-port.js';
import { spawnOwned } from './owned-processes.mjs';

/**
 * The cached llama-server build (or LLAMA_SERVER_BIN). Without one, the tests that need it are skipped
 * outside CI (and say so); CI builds it first, so there its absence is a failure.
 */
export async function llamaServerForTests(what: string): Promise<string | null> {
  try {
    return await findLlamaServer(process.env.LLAMA_SERVER_BIN ?? null, llamaServerCache());
  } catch (err) {
    if (process.env.CI) throw err;
    console.warn(`Skipping ${what}: ${(err as Error).message}`);
    return null;
  }
}

export interface RunningLlamaServer {
  /** Its OpenAI base URL, `http://127.0.0.1:<port>/v1`. */
  url: string;
  origin: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** A llama-server on loopback serving `model`, as an operator runs one beside the platform; ready when it returns. */
export async function startLlamaServer(
  binary: string,
  model: string,
  options: { parallel: number; contextSize: number },
): Promise<RunningLlamaServer> {
  const port = await freePort();
  const args = ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-np', String(options.parallel)];
  args.push('-c', String(options.contextSize * options.parallel), '-t', '1', '--jinja', '--log-disable');
  const proc = spawnOwned(binary, args, { stdio: 'ignore' });
  const origin = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const health = await fetch(`${origin}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (health === 200) return { url: `${origin}/v1`, origin, proc, stop };
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server on port ${port} did not become healthy (exit ${proc.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
