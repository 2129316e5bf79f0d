import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { spawnOwned } from './owned-processes.mjs';

/** One redis-server of the cluster, its node file (the cluster's view, kept across a restart) in its own folder. */
class ClusterNode {
  proc: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly busPort: number,
    private readonly dir: string,
    private readonly nodeTimeoutMs: number,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  start(): void {
    this.proc = spawnOwned(
      'redis-server',
      [
        '--port',
        String(this.port),
        // The bus port beside a free port may not be free (or not be a port): chosen as freely.
        '--cluster-port',
        String(this.busPort),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(this.dir, 'nodes.conf'),
        '--cluster-node-timeout',
        String(this.nodeTimeoutMs),
        // The other shards keep serving while one has no primary (see docs/operations/redis-cluster.md).
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    const proc = this.proc!;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  }

  /** A command on a short-lived connection; null when the node does not answer. */
  async ask(...args: [string, ...(string | number)[]]): Promise<unknown> {
    const client = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => undefined);
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
  state: () => Promise<string> = async () => '',
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms ${await state()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** A node's line of CLUSTER NODES: `<id> <ip:port@bus> <flags> <primary id> ... <slots...>`. */
interface NodeLine {
  address: string;
  flags: string[];
  slots: string[];
}

const nodeLines = (reply: unknown): NodeLine[] =>
  String(reply ?? '')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.split(' ');
      return { address: address.split('@')[0]!, flags: flags.split(','), slots };
    });

/**
 * A Redis Cluster of six nodes on loopback, three primaries each with a replica, for tests that kill
 * a primary and watch its replica take over. A short node timeout keeps failovers to seconds.
 */
export class RedisCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly dir: string,
  ) {}

  static async start(options: { nodeTimeoutMs?: number } = {}): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-cluster-'));
    // Twelve distinct ports: a port just freed may be handed out again.
    const ports = new Set<number>();
    while (ports.size < 12) ports.add(await freePort());
    const [...free] = ports;
    const nodes = Array.from(
      { length: 6 },
      (_, i) =>
        new ClusterNode(
          free[2 * i]!,
          free[2 * i + 1]!,
          mkdtempSync(join(dir, `node-${i}-`)),
          options.nodeTimeoutMs ?? 2000,
        ),
    );
    const cluster = new RedisCluster(nodes, dir);
    for (const node of nodes) node.start();
    await until(
      'every node answers',
      async () => (await Promise.all(nodes.map((n) => n.ask('PING')))).every(Boolean),
      10_000,
    );
    const create = spawnOwned(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '1', '--cluster-yes'],
      { stdio: 'ignore' },
    );
    const code = await new Promise<number | null>((r) => create.once('exit', r));
    if (code !== 0) throw new Error(`redis-cli --cluster create exited with ${code}`);
    await cluster.waitHealthy(20_000);
    return cluster;
  }

  /** The seeds, as REDIS_CLUSTER_NODES takes them: every node (clients need only one that answers). */
  get seeds(): string {
    return this.nodes.map((n) => n.address).join(',');
  }

  /** The cluster's nodes as a running node sees them. */
  private async view(): Promise<NodeLine[]> {
    for (const node of this.nodes.filter((n) => n.running)) {
      const reply = await node.ask('CLUSTER', 'NODES');
      if (reply) return nodeLines(reply);
    }
    return [];
  }

  /** The primary serving `key`'s slot, as the running nodes see it. */
  async primaryOf(key: string): Promise<ClusterNode> {
    const running = this.nodes.find((n) => n.running)!;
    const slot = Number(await running.ask('CLUSTER', 'KEYSLOT', key));
    const owner = (await this.view()).find(
      (line) =>
        line.flags.includes('master') &&
        !line.flags.includes('fail') &&
        line.slots.some((range) => {
          const [from, to = from] = range.split('-').map(Number);
          return slot >= from! && slot <= to!;
        }),
    );
    const node = this.nodes.find((n) => n.address === owner?.address);
    if (!node) throw new Error(`no primary serves slot ${slot} of ${key}`);
    return node;
  }

  /** kill -9 of the primary serving `key`'s slot; resolves once it is dead. */
  async killPrimaryOf(key: string): Promise<ClusterNode> {
    const primary = await this.primaryOf(key);
    await primary.kill();
    return primary;
  }

  /** Until another node serves `key`'s slot as a primary: the replica has taken over. */
  async waitFailover(killed: ClusterNode, key: string, timeoutMs: number): Promise<ClusterNode> {
    let promoted: ClusterNode | null = null;
    await until(
      'a replica takes over',
      async () => {
        promoted = await this.primaryOf(key).catch(() => null);
        return promoted !== null && promoted !== killed;
      },
      timeoutMs,
    );
    return promoted!;
  }

  /**
   * Keeps what the primary serving `key`'s slot acknowledges from here on from its replicas: they are
   * disconnected and fail to authenticate when they reconnect, until `healReplication`.
   */
  async cutReplication(key: string): Promise<void> {
    const primary = await this.primaryOf(key);
    for (const node of this.nodes.filter((n) => n.running && n !== primary))
      await node.ask('CONFIG', 'SET', 'masterauth', 'not-the-password');
    await primary.ask('CLIENT', 'KILL', 'TYPE', 'replica');
  }

  /** Undoes `cutReplication` on every running node. */
  async healReplication(): Promise<void> {
    for (const node of this.nodes.filter((n) => n.running)) await node.ask('CONFIG', 'SET', 'masterauth', '');
  }

  /** Restarts a killed node: its node file makes it rejoin, as a replica of the primary that replaced it. */
  rejoin(node: ClusterNode): void {
    node.start();
  }

  /** Every node up, the cluster's state ok on each, three primaries each with a replica in sync. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    await until(
      'the cluster is healthy',
      async () => {
        const infos = await Promise.all(this.nodes.map((n) => n.ask('CLUSTER', 'INFO')));
        if (!infos.every((info) => /cluster_state:ok/.test(String(info)))) return false;
        const lines = await this.view();
        const primaries = lines.filter((l) => l.flags.includes('master') && l.slots.length > 0);
        const replicas = lines.filter((l) => l.flags.includes('slave') && !l.flags.includes('fail'));
        if (primaries.length !== 3 || replicas.length !== 3) return false;
        const replication = await Promise.all(
          this.nodes.map((n) => n.ask('INFO', 'replication').then((info) => String(info))),
        );
        return replication.every((info) => !/role:slave/.test(info) || /master_link_status:up/.test(info));
      },
      timeoutMs,
      async () =>
        `(nodes ${this.nodes.map((n) => `${n.address} ${n.running ? 'up' : 'down'}`).join(', ')}; view: ${JSON.stringify(await this.view())})`,
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
