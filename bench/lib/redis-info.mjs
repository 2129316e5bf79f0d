// What a bench reads from Redis's own accounting: CPU, commands, bytes received, memory, keys, summed over
// every node it names (on a Redis Cluster, its primaries: see clusterPrimaries); and from /proc, the CPU and
// memory of a process and the machine's busy time.
import { readFileSync } from 'node:fs';
import { nodeLines, servingPrimaries } from '../../test/support/loopback-cluster.mjs';

/**
 * `inputBytes`: bytes clients sent (`total_net_input_bytes`). `nodeCalls`: commands per node, in the
 * order the nodes were named. `own`: INFO commands the bench had sent before this reading (which the
 * reading's counts include).
 * @typedef {{ cpuMs: number, calls: Map<string, number>, nodeCalls: number[], inputBytes: number, usedMemory: number, own: number }} RedisCounters
 */

/**
 * Parses the `key:value` lines of an INFO reply.
 * @param {string} text
 * @returns {Map<string, string>}
 */
function infoFields(text) {
  /** @type {Map<string, string>} */
  const fields = new Map();
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields.set(line.slice(0, at), line.slice(at + 1));
  }
  return fields;
}

/**
 * The Redis nodes a bench measures: their CPU (`INFO cpu`: used_cpu_sys + used_cpu_user), commands
 * (`INFO commandstats`: calls per command) and memory (`used_memory`), summed over the nodes, so that
 * a Redis Cluster counts as the sum of its primaries.
 */
export class RedisNodes {
  /**
   * @param {import('ioredis').Redis[]} clients one per node
   * @param {string[]} names the nodes' `host:port`, in the same order
   */
  constructor(clients, names) {
    this.clients = clients;
    this.names = names;
    /** INFO commands sent so far, which Redis counts as any other */
    this.infoCalls = 0;
  }

  /**
   * @param {string[]} urls redis:// URLs, one per node
   * @returns {Promise<RedisNodes>}
   */
  static async connect(urls) {
    const { Redis } = await import('ioredis');
    return new RedisNodes(
      urls.map((url) => new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: false })),
      urls.map((url) => new URL(url).host),
    );
  }

  /** @returns {Promise<RedisCounters>} */
  async read() {
    const own = this.infoCalls;
    this.infoCalls += this.clients.length;
    let cpuMs = 0;
    let usedMemory = 0;
    let inputBytes = 0;
    /** @type {Map<string, number>} */
    const calls = new Map();
    /** @type {number[]} */
    const nodeCalls = [];
    for (const client of this.clients) {
      const fields = infoFields(/** @type {string} */ (await client.info('all')));
      cpuMs += 1000 * (Number(fields.get('used_cpu_sys')) + Number(fields.get('used_cpu_user')));
      usedMemory += Number(fields.get('used_memory'));
      inputBytes += Number(fields.get('total_net_input_bytes'));
      let nodeTotal = 0;
      for (const [key, value] of fields) {
        if (!key.startsWith('cmdstat_')) continue;
        const n = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
        calls.set(key.slice(8), (calls.get(key.slice(8)) ?? 0) + n);
        nodeTotal += n;
      }
      nodeCalls.push(nodeTotal);
    }
    return { cpuMs, calls, nodeCalls, inputBytes, usedMemory, own };
  }

  /** @returns {Promise<number>} used_memory summed over the nodes */
  async usedMemory() {
    let total = 0;
    this.infoCalls += this.clients.length;
    for (const client of this.clients)
      total += Number(infoFields(/** @type {string} */ (await client.info('memory'))).get('used_memory'));
    return total;
  }

  /** @returns {Promise<number>} keys held (`DBSIZE`), summed over the nodes */
  async keyCount() {
    let total = 0;
    for (const client of this.clients) total += await client.dbsize();
    return total;
  }

  /**
   * Every key's shape, with the run's prefix and each part that names one thing (a part with a digit in
   * it: an id, a number) written `*`, and how many keys have it, the most common first; over every node.
   * @param {string} [prefix] written `{prefix}` where a key begins with it
   * @returns {Promise<Array<[string, number]>>}
   */
  async keyShapes(prefix) {
    /** @type {Map<string, number>} */
    const shapes = new Map();
    for (const client of this.clients) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const bare = prefix && key.startsWith(`${prefix}:`) ? `{prefix}${key.slice(prefix.length)}` : key;
          const shape = bare
            .split(':')
            .map((part) => (/\d/.test(part) ? '*' : part))
            .join(':');
          shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
        }
      } while (cursor !== '0');
    }
    return [...shapes].sort((a, b) => b[1] - a[1]);
  }

  /**
   * Bytes Redis holds for the keys matching `pattern` that `keep` accepts (`MEMORY USAGE`, every
   * element counted), over every node: each node is asked about the keys it holds.
   * @param {string} pattern a SCAN MATCH pattern
   * @param {(key: string) => boolean} [keep]
   * @returns {Promise<number>}
   */
  async keyBytes(pattern, keep = () => true) {
    let bytes = 0;
    for (const client of this.clients) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const key of keys.filter(keep)) bytes += (await client.memory('USAGE', key, 'SAMPLES', '0')) ?? 0;
      } while (cursor !== '0');
    }
    return bytes;
  }

  disconnect() {
    for (const client of this.clients) client.disconnect();
  }
}

/**
 * The `host:port` entries of a command-line list such as `--redis-cluster-nodes a:7000,b:7001`.
 * @param {string} list
 * @returns {string[]}
 */
export const nodeList = (list) =>
  list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);

/**
 * The primaries serving a Redis Cluster's slots (`host:port`, as the cluster names them), from the first
 * of `seeds` that answers: the nodes a bench sums, since a replica only replays its primary's writes
 * and would count them twice. Throws when no seed answers as a node of a cluster serving slots.
 * @param {string[]} seeds `host:port`
 * @returns {Promise<string[]>}
 */
export async function clusterPrimaries(seeds) {
  const { Redis } = await import('ioredis');
  for (const seed of seeds) {
    const client = new Redis(`redis://${seed}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const primaries = servingPrimaries(nodeLines(await client.call('CLUSTER', 'NODES')));
      if (primaries.length) return primaries.map((p) => p.address);
    } catch {
      // Not answering, or not a cluster node: the next seed may be.
    } finally {
      client.disconnect();
    }
  }
  throw new Error(
    `no primary found: none of ${seeds.join(', ')} answered CLUSTER NODES as a node of a cluster serving slots`,
  );
}

/**
 * What happened between two readings: CPU ms, commands (total, per command and per node, the INFO calls
 * the bench made itself left out), bytes received, memory change.
 * @param {RedisCounters} before
 * @param {RedisCounters} after
 */
export function redisDelta(before, after) {
  const ownInfoCalls = after.own - before.own;
  /** @type {Map<string, number>} */
  const calls = new Map();
  for (const [name, n] of after.calls) {
    const d = n - (before.calls.get(name) ?? 0) - (name === 'info' ? ownInfoCalls : 0);
    if (d > 0) calls.set(name, d);
  }
  const commands = [...calls.values()].reduce((a, b) => a + b, 0);
  // Each reading sends one INFO to every node.
  const ownPerNode = ownInfoCalls / Math.max(1, after.nodeCalls.length);
  return {
    cpuMs: after.cpuMs - before.cpuMs,
    commands,
    calls,
    nodeCalls: after.nodeCalls.map((n, i) => n - (before.nodeCalls[i] ?? 0) - ownPerNode),
    inputBytes: after.inputBytes - before.inputBytes,
    memory: after.usedMemory - before.usedMemory,
  };
}

const CLK_TCK = 100;

/**
 * CPU ms a process has used so far (all its threads), from /proc; 0 where there is none.
 * @param {number | undefined} pid
 * @returns {number}
 */
export function processCpuMs(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/**
 * A process's resident memory now (`VmRSS`) and the most it has held since it started (`VmHWM`), in
 * bytes, from /proc/<pid>/status; null where there is none (the process has ended, or no /proc).
 * @param {number | undefined} pid
 * @returns {{ rss: number, peak: number } | null}
 */
export function processMemory(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (/** @type {string} */ field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
    const rss = kib('VmRSS');
    const peak = kib('VmHWM');
    return Number.isFinite(rss) && Number.isFinite(peak) ? { rss: rss * 1024, peak: peak * 1024 } : null;
  } catch {
    return null;
  }
}

/**
 * CPU ms the whole machine has been busy (all cores, not idle or waiting), from /proc/stat.
 * @returns {number}
 */
export function machineBusyMs() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return ((user + nice + system + irq + softirq + steal) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}
