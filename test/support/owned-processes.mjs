// Every process the test suite starts (APIs, workers, redis-servers, llama-servers, clients) is started
// here, so none outlives the suite, however a test ends:
// - each runs in a process group of its own, stopped as a whole (a worker's llama-server child with it);
// - on Linux the kernel kills it when the process that started it dies (`setpriv --pdeathsig KILL`), so
//   a jest worker killed mid-test, or a whole run stopped, takes its platforms with it;
// - a test file's processes still running when it ends are stopped by the hook in stop-owned-after-file.mjs,
//   and after that the file can start none (a beforeAll that timed out may still be starting some);
// - each is recorded in the run's registry folder, which the global teardown reads to stop (and report)
//   whatever is left.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment variable naming the run's registry folder (set by the global setup). */
export const REGISTRY_ENV = 'CONVEYOR_TEST_PROCESSES';

/** @import { ChildProcess, SpawnOptions } from 'node:child_process' */

/** @type {string[] | undefined} */
let wrapper;
/** `setpriv --pdeathsig KILL --` where util-linux has it (Linux); nothing elsewhere. */
export function parentDeathWrapper() {
  wrapper ??=
    process.platform === 'linux' &&
    spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore', timeout: 5000 }).status === 0
      ? ['setpriv', '--pdeathsig', 'KILL', '--']
      : [];
  return wrapper;
}

/** @type {Set<ChildProcess>} this test file's processes */
const owned = new Set();
let closed = false;

/**
 * When the process started, in clock ticks since boot (/proc/<pid>/stat field 22): with the pid, it names
 * one process, so a pid the kernel has given to another process since is never signalled.
 * @param {number} pid
 * @returns {string | null}
 */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Starts `command args` as a process this test file owns (see above). Same arguments as `spawn`.
 * @param {string} command
 * @param {readonly string[]} args
 * @param {SpawnOptions} [options]
 * @returns {ChildProcess}
 */
export function spawnOwned(command, args, options = {}) {
  if (closed) throw new Error(`This test file has ended; it may start no more processes (${command}).`);
  const [first, ...rest] = [...parentDeathWrapper(), command, ...args];
  const proc = spawn(/** @type {string} */ (first), rest, { ...options, detached: true });
  owned.add(proc);
  proc.once('exit', () => owned.delete(proc));
  const registry = process.env[REGISTRY_ENV];
  if (registry && proc.pid) {
    const what = [command, ...args].join(' ').slice(0, 300);
    writeFileSync(join(registry, String(proc.pid)), `${startTime(proc.pid) ?? ''}\n${what}\n`);
  }
  return proc;
}

/**
 * Stops a process and its group: SIGTERM, then SIGKILL after `graceMs`.
 * @param {ChildProcess} proc
 * @param {number} [graceMs]
 */
export async function stopOwned(proc, graceMs = 10_000) {
  if (proc.exitCode !== null || proc.signalCode !== null || !proc.pid) return;
  const pid = proc.pid;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  signalGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  // Whatever else the group holds (a child that ignored the signal) goes too.
  signalGroup(pid, 'SIGKILL');
}

/**
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Stops every process this test file still runs, and refuses new ones from now on. */
export async function stopAllOwned() {
  closed = true;
  await Promise.all([...owned].map((proc) => stopOwned(proc, 5000)));
}

/**
 * For the global teardown: SIGKILLs the group of every recorded process still running, and returns
 * what each was. An empty list means the suite left nothing behind.
 * @param {string} registry
 * @returns {string[]}
 */
export function killLeftovers(registry) {
  if (!existsSync(registry)) return [];
  const left = [];
  for (const name of readdirSync(registry)) {
    const pid = Number(name);
    const [started = '', what = ''] = readFileSync(join(registry, name), 'utf8').split('\n');
    if (!started || startTime(pid) !== started) continue;
    left.push(`pid ${pid}: ${what}`);
    signalGroup(pid, 'SIGKILL');
  }
  return left;
}

/**
 * A fresh registry folder for one run.
 * @param {string} dir
 */
export function createRegistry(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
