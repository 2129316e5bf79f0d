import type { ChildProcess } from 'node:child_process';
import { spawnOwned } from './owned-processes.mjs';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

export const PRIMARY_NAME = 'conveyor';

/** A redis-server of the group: a data node with AOF in a folder of its own, or a sentinel. */
class Node {
  proc: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  start(extra: string[] = []): void {
    this.proc = spawnOwned('redis-server', [...this.args, ...extra], { stdio: 'ignore' });
  }

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    const proc = this.proc!;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  }

  client(): Redis {
    const client = new Redis({
      port: this.port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      // RESP2: SENTINEL's replies as flat field/value arrays.
      protocol: 2,
    });
    client.on('error', () => undefined);
    return client;
  }

  /** A command on a short-lived connection; null when the node does not answer. */
  async ask(...args: [string, ...(string | number)[]]): Promise<unknown> {
    const client = this.client();
    try {
      await client.connect();
      return await client.call(...args);
    } catch {
      return null;
    } finally {
      client.disconnect();
    }
  }
}

const until = async (
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  state: () => string = () => '',
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms ${state()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** A `SENTINEL MASTER` reply: a flat field/value array. */
const record = (fields: unknown): Record<string, string> => {
  const result: Record<string, string> = {};
  if (Array.isArray(fields)) for (let i = 0; i + 1 < fields.length; i += 2) result[fields[i]] = fields[i + 1];
  return result;
};

/** `SENTINEL REPLICAS`/`SENTINELS` replies: arrays of records. */
const records = (reply: unknown): Record<string, string>[] => (Array.isArray(reply) ? reply.map(record) : []);

/**
 * A primary, a replica and three sentinels (quorum 2) on loopback, tuned so that a failover takes
 * seconds: the sentinels call the primary down after `downAfterMs` without a reply.
 */
export class SentinelGroup {
  private constructor(
    private readonly dir: string,
    readonly nodes: Node[],
    readonly sentinels: Node[],
  ) {}

  static async start(options: { downAfterMs?: number; failoverTimeoutMs?: number } = {}): Promise<SentinelGroup> {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-sentinel-'));
    const nodes: Node[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const nodeDir = join(dir, `node-${i}`);
      mkdirSync(nodeDir);
      nodes.push(
        new Node(port, [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          nodeDir,
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          '--save',
          '',
          '--maxmemory-policy',
          'noeviction',
          // A replica's first sync starts at once instead of after Redis 7's 5 s wait for more replicas.
          '--repl-diskless-sync-delay',
          '0',
        ]),
      );
    }
    const sentinels: Node[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${nodes[0].port} 2`,
          `sentinel down-after-milliseconds ${PRIMARY_NAME} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${PRIMARY_NAME} ${options.failoverTimeoutMs ?? 3000}`,
          `sentinel parallel-syncs ${PRIMARY_NAME} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push(new Node(port, [conf, '--sentinel']));
    }
    const group = new SentinelGroup(dir, nodes, sentinels);
    nodes[0].start();
    nodes[1].start(['--replicaof', '127.0.0.1', String(nodes[0].port)]);
    // Sentinels list a primary's replicas from its INFO, which they read every 10 s: start them once
    // the replica is in sync, so the first INFO already names it.
    await until(
      'replica in sync',
      async () => /master_link_status:up/.test(String(await nodes[1].ask('INFO', 'replication'))),
      10_000,
    );
    for (const s of sentinels) s.start();
    await group.waitHealthy(20_000);
    return group;
  }

  /** REDIS_SENTINELS for the platform. */
  get sentinelList(): string {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  /** The primary's port as the sentinels report it; null while they disagree or do not answer. */
  async primaryPort(): Promise<number | null> {
    const answers = await Promise.all(
      this.sentinels.map((s) => s.ask('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', PRIMARY_NAME)),
    );
    const ports = new Set(answers.map((a) => (Array.isArray(a) ? Number(a[1]) : null)));
    const [port] = ports;
    return ports.size === 1 ? port : null;
  }

  private node(port: number): Node {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    return node;
  }

  /**
   * Ready for a failover: every sentinel agrees on the primary, knows the other two sentinels, and
   * sees a replica in sync with it (a replica it has not seen lately is no candidate).
   */
  async waitHealthy(timeoutMs: number): Promise<void> {
    let state = '';
    await until(
      'sentinel group healthy',
      async () => {
        state = await this.unhealthy();
        return state === '';
      },
      timeoutMs,
      () => state,
    );
  }

  /**
   * What keeps the group from being ready for a failover; empty when nothing does. A replica counts
   * when every sentinel lists it as up and it is in sync by its own account: a sentinel reads its
   * replicas' INFO only every 10 s until the primary is down, so its own link status may lag.
   */
  private async unhealthy(): Promise<string> {
    const unsettled = await this.unsettled();
    if (unsettled) return unsettled;
    const port = (await this.primaryPort())!;
    if ((await this.node(port).ask('ROLE')) === null) return `the primary (${port}) does not answer`;
    const inSync = new Set<number>();
    for (const node of this.nodes.filter((n) => n.running && n.port !== port)) {
      const info = String(await node.ask('INFO', 'replication'));
      if (info.includes(`master_port:${port}\r\n`) && info.includes('master_link_status:up')) inSync.add(node.port);
    }
    if (!inSync.size) return `no replica of ${port} is in sync`;
    for (const s of this.sentinels) {
      const peers = records(await s.ask('SENTINEL', 'SENTINELS', PRIMARY_NAME));
      if (peers.length !== 2) return `sentinel ${s.port} knows ${peers.length} other sentinels`;
      const replicas = records(await s.ask('SENTINEL', 'REPLICAS', PRIMARY_NAME));
      if (!replicas.some((r) => r.flags === 'slave' && inSync.has(Number(r.port))))
        return `sentinel ${s.port} lists no replica in sync: ${JSON.stringify(replicas.map((r) => [r.port, r.flags]))}`;
    }
    return '';
  }

  /**
   * SIGKILLs the primary (no AOF flush beyond what `appendfsync always` did, no goodbye to the
   * replica); returns its port.
   */
  async killPrimary(): Promise<number> {
    const port = await this.primaryPort();
    if (port === null) throw new Error('the sentinels do not agree on a primary');
    await this.node(port).kill();
    return port;
  }

  /** Waits until the sentinels name a primary other than `oldPort`; returns its port. */
  async waitFailover(oldPort: number, timeoutMs: number): Promise<number> {
    let port: number | null = null;
    await until(
      'failover',
      async () => {
        port = await this.primaryPort();
        return port !== null && port !== oldPort;
      },
      timeoutMs,
    );
    return port!;
  }

  /**
   * Stops replication without the primary noticing: the replicas' link is cut and they can no longer
   * authenticate to reconnect. Writes from now on exist on the primary only, as writes a primary
   * acknowledged just before it died would.
   */
  async cutReplication(): Promise<void> {
    const port = await this.primaryPort();
    for (const node of this.nodes.filter((n) => n.running && n.port !== port))
      await node.ask('CONFIG', 'SET', 'masterauth', 'not-the-password');
    await this.node(port!).ask('CLIENT', 'KILL', 'TYPE', 'replica');
  }

  /** Undoes `cutReplication` on every running node. */
  async healReplication(): Promise<void> {
    for (const node of this.nodes.filter((n) => n.running)) await node.ask('CONFIG', 'SET', 'masterauth', '');
  }

  /**
   * Whether a failover is still under way: the sentinels disagree on the primary, or one of them still
   * flags it (down, failing over). Empty once settled.
   */
  private async unsettled(): Promise<string> {
    const port = await this.primaryPort();
    if (port === null) return 'the sentinels do not agree on a primary';
    for (const s of this.sentinels) {
      const flags = record(await s.ask('SENTINEL', 'MASTER', PRIMARY_NAME)).flags;
      if (flags !== 'master') return `sentinel ${s.port} flags the primary ${flags}`;
    }
    return '';
  }

  /**
   * Restarts a killed node from its AOF as a replica of the current primary, as an operator would,
   * once the failover is over: a node back while a sentinel is still failing over may be promoted
   * again, and for a moment there would be two primaries.
   */
  async rejoin(port: number, primaryPort: number): Promise<void> {
    let state = '';
    await until(
      'failover settled',
      async () => {
        state = await this.unsettled();
        return state === '';
      },
      20_000,
      () => state,
    );
    this.node(port).start(['--replicaof', '127.0.0.1', String(primaryPort)]);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.nodes].map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
