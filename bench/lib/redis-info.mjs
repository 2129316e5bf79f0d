// What a bench reads from Redis's own accounting: CPU, commands, memory, summed over every node it names.
import { readFileSync } from 'node:fs';

/**
 * `own`: INFO commands the bench had sent before this reading (which the reading's counts include).
 * @typedef {{ cpuMs: number, calls: Map<string, number>, usedMemory: number, own: number }} RedisCounters
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
  /** @param {import('ioredis').Redis[]} clients one per node */
  constructor(clients) {
    this.clients = clients;
    /** INFO commands sent so far, which Redis counts as any other */
    this.infoCalls = 0;
  }

  /**
   * @param {string[]} urls redis:// URLs, one per node
   * @returns {Promise<RedisNodes>}
   */
  static async connect(urls) {
    const { Redis } = await import('ioredis');
    return new RedisNodes(urls.map((url) => new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: false })));
  }

  /** @returns {Promise<RedisCounters>} */
  async read() {
    const own = this.infoCalls;
    this.infoCalls += this.clients.length;
    let cpuMs = 0;
    let usedMemory = 0;
    /** @type {Map<string, number>} */
    const calls = new Map();
    for (const client of this.clients) {
      const fields = infoFields(/** @type {string} */ (await client.info('all')));
      cpuMs += 1000 * (Number(fields.get('used_cpu_sys')) + Number(fields.get('used_cpu_user')));
      usedMemory += Number(fields.get('used_memory'));
      for (const [key, value] of fields) {
        if (!key.startsWith('cmdstat_')) continue;
        const n = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
        calls.set(key.slice(8), (calls.get(key.slice(8)) ?? 0) + n);
      }
    }
    return { cpuMs, calls, usedMemory, own };
  }

  /** @returns {Promise<number>} used_memory summed over the nodes */
  async usedMemory() {
    let total = 0;
    this.infoCalls += this.clients.length;
    for (const client of this.clients)
      total += Number(infoFields(/** @type {string} */ (await client.info('memory'))).get('used_memory'));
    return total;
  }

  disconnect() {
    for (const client of this.clients) client.disconnect();
  }
}

/**
 * What happened between two readings: CPU ms, commands (total and per command, the INFO calls the bench
 * made itself left out), memory change.
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
  return { cpuMs: after.cpuMs - before.cpuMs, commands, calls, memory: after.usedMemory - before.usedMemory };
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
