// A Redis Cluster of six redis-servers on loopback, three primaries each with a replica, for the tests
// (redis-cluster.ts adds killing a primary and watching its replica take over) and for the benches that
// measure the platform on a cluster. Plain JavaScript so that a bench, which cannot load TypeScript, uses
// the same one. Every node is started with spawnOwned, so none outlives the process that started it,
// however that ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { spawnOwned } from './owned-processes.mjs';

/** @import { ChildProcess } from 'node:child_process' */
/** @import { AddressInfo } from 'node:net' */

/** @returns {Promise<number>} a TCP port on 127.0.0.1 that was free a moment ago */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** One redis-server of the cluster, its node file (the cluster's view, kept across a restart) in its own folder. */
export class ClusterNode {
  /** @type {ChildProcess | null} */
  proc = null;

  /**
   * @param {number} port
   * @param {number} busPort
   * @param {string} dir
   * @param {number} nodeTimeoutMs
   */
  constructor(port, busPort, dir, nodeTimeoutMs) {
    this.port = port;
    this.busPort = busPort;
    this.dir = dir;
    this.nodeTimeoutMs = nodeTimeoutMs;
  }

  /** @returns {string} */
  get address() {
    return `127.0.0.1:${this.port}`;
  }

  /** @returns {boolean} */
  get running() {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  start() {
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

  /** kill -9; resolves once the process has exited. */
  async kill() {
    const proc = this.proc;
    if (!proc || !this.running) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  /**
   * A command on a short-lived connection; null when the node does not answer.
   * @param {string} command
   * @param {...(string | number)} args
   * @returns {Promise<unknown>}
   */
  async ask(command, ...args) {
    const client = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await client.call(command, ...args);
    } catch {
      return null;
    } finally {
      client.disconnect();
    }
  }
}

/**
 * Polls `check` every 100 ms until it holds; throws after `timeoutMs`, with `state()` in the message.
 * @param {string} what
 * @param {() => Promise<boolean>} check
 * @param {number} timeoutMs
 * @param {() => Promise<string>} [state]
 */
export async function until(what, check, timeoutMs, state = async () => '') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms ${await state()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A node's line of CLUSTER NODES: `<id> <ip:port@bus> <flags> <primary id> ... <slots...>`.
 * @typedef {{ address: string, flags: string[], slots: string[] }} NodeLine
 */

/**
 * The lines of a CLUSTER NODES reply.
 * @param {unknown} reply
 * @returns {NodeLine[]}
 */
export const nodeLines = (reply) =>
  String(reply ?? '')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.split(' ');
      return { address: address.split('@')[0] ?? '', flags: flags.split(','), slots };
    });

/**
 * The primaries serving slots in a CLUSTER NODES reply, failed ones left out.
 * @param {NodeLine[]} lines
 * @returns {NodeLine[]}
 */
export const servingPrimaries = (lines) =>
  lines.filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length > 0);

/**
 * Six nodes on loopback, three primaries each with a replica. A short node timeout (the tests' 2 s by
 * default) keeps failovers to seconds.
 */
export class LoopbackCluster {
  /**
   * @param {ClusterNode[]} nodes
   * @param {string} dir the folder holding every node's own
   */
  constructor(nodes, dir) {
    this.nodes = nodes;
    this.dir = dir;
  }

  /**
   * Starts the nodes, joins them with `redis-cli --cluster create`, and resolves once the cluster is
   * healthy; on any failure the nodes already started are stopped before it rejects.
   * @param {{ nodeTimeoutMs?: number }} [options]
   * @returns {Promise<LoopbackCluster>}
   */
  static async start(options = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-cluster-'));
    // Twelve distinct ports: a port just freed may be handed out again.
    /** @type {Set<number>} */
    const ports = new Set();
    while (ports.size < 12) ports.add(await freePort());
    const free = [...ports];
    const nodes = Array.from(
      { length: 6 },
      (_, i) =>
        new ClusterNode(
          Number(free[2 * i]),
          Number(free[2 * i + 1]),
          mkdtempSync(join(dir, `node-${i}-`)),
          options.nodeTimeoutMs ?? 2000,
        ),
    );
    const cluster = new LoopbackCluster(nodes, dir);
    try {
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
      const code = await new Promise((resolve) => create.once('exit', resolve));
      if (code !== 0) throw new Error(`redis-cli --cluster create exited with ${code}`);
      await cluster.waitHealthy(20_000);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** The seeds, as REDIS_CLUSTER_NODES takes them: every node (clients need only one that answers). */
  get seeds() {
    return this.nodes.map((n) => n.address).join(',');
  }

  /**
   * The cluster's nodes as a running node sees them.
   * @returns {Promise<NodeLine[]>}
   */
  async view() {
    for (const node of this.nodes.filter((n) => n.running)) {
      const reply = await node.ask('CLUSTER', 'NODES');
      if (reply) return nodeLines(reply);
    }
    return [];
  }

  /**
   * Every node up, the cluster's state ok on each, three primaries each with a replica in sync.
   * @param {number} timeoutMs
   */
  async waitHealthy(timeoutMs) {
    await until(
      'the cluster is healthy',
      async () => {
        const infos = await Promise.all(this.nodes.map((n) => n.ask('CLUSTER', 'INFO')));
        if (!infos.every((info) => /cluster_state:ok/.test(String(info)))) return false;
        const lines = await this.view();
        const replicas = lines.filter((l) => l.flags.includes('slave') && !l.flags.includes('fail'));
        if (servingPrimaries(lines).length !== 3 || replicas.length !== 3) return false;
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

  /** Kills every node and removes their files. */
  async stop() {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
