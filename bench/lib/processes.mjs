// Child processes a bench starts and must always stop, also on failure or Ctrl-C.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { now, sleep } from './stats.mjs';

/** @import { ChildProcessByStdio } from 'node:child_process' */
/** @import { AddressInfo } from 'node:net' */
/** @import { Readable } from 'node:stream' */

/**
 * A child process and what it printed so far (the last 100-200 kB of stdout and stderr together).
 * @typedef {object} Child
 * @property {string} name
 * @property {ChildProcessByStdio<null, Readable, Readable>} proc
 * @property {string} output
 * @property {boolean} [stopped] stopped on purpose, so its exit is no failure
 */

/** @typedef {Child & { readyMs: number }} ReadyChild a child that printed its ready line, `readyMs` after its start */

/**
 * A TCP port on 127.0.0.1 that was free a moment ago.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      // A TCP server's address is an AddressInfo (a string only for a pipe or socket path).
      const { port } = /** @type {AddressInfo} */ (server.address());
      server.close(() => ok(port));
    });
  });
}

/**
 * The children of one bench run. `death` rejects when a child dies after it was
 * ready, so requests to it fail at once instead of hanging until their timeout.
 */
export class Children {
  /** @type {Set<Children>} */
  static all = new Set();
  /** @type {Child[]} */
  list = [];
  stopping = false;
  /** @type {(err: Error) => void} rejects `death`; set by the constructor */
  died;

  /** @param {string} cwd */
  constructor(cwd) {
    this.cwd = cwd;
    Children.all.add(this);
    /** @type {Promise<never>} */
    this.death = new Promise((_, reject) => (this.died = reject));
    this.death.catch(() => undefined);
  }

  /**
   * A redis-server of the bench's own on loopback, keeping nothing on disk; its URL once it is ready.
   * @param {number | string} [port] a free one when not given
   * @returns {Promise<string>}
   */
  async launchRedis(port) {
    const chosen = String(port ?? (await freePort()));
    await this.launch(
      'redis',
      'redis-server',
      ['--port', chosen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {},
      /Ready to accept connections/,
      30_000,
    );
    return `redis://127.0.0.1:${chosen}`;
  }

  /**
   * Starts the built API and one worker (this checkout's `dist/`) on a Redis of the bench's own, with
   * `configFile` as their deployments file; `env` adds to or overrides the settings every bench shares.
   * REDIS_CLUSTER_NODES is set, empty, so that one in the shell's environment cannot send them elsewhere.
   * @param {{ redisUrl: string, prefix: string, configFile: string, env?: Record<string, string> }} platform
   * @returns {Promise<string>} the API's base URL
   */
  async launchPlatform({ redisUrl, prefix, configFile, env = {} }) {
    const port = await freePort();
    const settings = {
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: '',
      REDIS_PREFIX: prefix,
      CONVEYOR_CONFIG: configFile,
      PORT: String(port),
      HOST: '127.0.0.1',
      UV_THREADPOOL_SIZE: '1',
      ...env,
    };
    await this.launch('api', process.execPath, ['dist/apps/api/src/main.js'], settings, /listening on/i);
    await this.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], settings, /Worker ready/);
    return `http://127.0.0.1:${port}`;
  }

  /**
   * Starts `count` workers from the build in `dist`, a few at a time (many Nest processes booting at once
   * on two cores starve each other's heartbeats), named worker<first>, worker<first + 1>, ...
   * @param {number} count
   * @param {{ dist: string, env: Record<string, string>, first?: number, atOnce?: number }} options
   * @returns {Promise<ReadyChild[]>}
   */
  async launchWorkers(count, { dist, env, first = 1, atOnce = 4 }) {
    /** @type {ReadyChild[]} */
    const started = [];
    while (started.length < count) {
      const n = Math.min(atOnce, count - started.length);
      const from = first + started.length;
      started.push(
        ...(await Promise.all(
          Array.from({ length: n }, (_, i) =>
            this.launch(
              `worker${from + i}`,
              process.execPath,
              [join(dist, 'apps/worker/src/main.js')],
              env,
              /Worker ready/,
              300_000,
            ),
          ),
        )),
      );
    }
    return started;
  }

  /**
   * Spawns `command args` and resolves once `readyLine` appears in its output.
   * @param {string} name
   * @param {string} command
   * @param {string[]} args
   * @param {Record<string, string>} env added to this process's environment
   * @param {RegExp} readyLine
   * @param {number} [timeoutMs]
   * @returns {Promise<ReadyChild>}
   */
  launch(name, command, args, env, readyLine, timeoutMs = 300_000) {
    const started = now();
    const proc = spawn(command, args, {
      cwd: this.cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    /** @type {Child} */
    const child = { name, proc, output: '' };
    this.list.push(child);
    return new Promise((ok, fail) => {
      let ready = false;
      const timer = setTimeout(
        () => fail(new Error(`${name} not ready in ${timeoutMs} ms:\n${child.output.slice(-4000)}`)),
        timeoutMs,
      );
      /** @param {Buffer} chunk */
      const onData = (chunk) => {
        child.output += chunk.toString();
        if (child.output.length > 200_000) child.output = child.output.slice(-100_000);
        if (!ready && readyLine.test(child.output)) {
          ready = true;
          clearTimeout(timer);
          ok(Object.assign(child, { readyMs: now() - started }));
        }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.on('error', (err) => fail(err));
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (!ready)
          fail(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${child.output.slice(-4000)}`));
        else if (!this.stopping && !child.stopped)
          this.died(
            new Error(`${name} exited unexpectedly (${signal ?? code}); last output:\n${child.output.slice(-4000)}`),
          );
      });
    });
  }

  /**
   * Runs `work` and fails as soon as a child dies, whichever comes first.
   * @template T
   * @param {Promise<T>} work
   * @returns {Promise<T>}
   */
  async watch(work) {
    work.catch(() => undefined);
    return Promise.race([this.death, work]);
  }

  /**
   * SIGTERM to every child still running, SIGKILL after 10 s.
   * @returns {Promise<void>}
   */
  async stopAll() {
    this.stopping = true;
    await Promise.all(this.list.map((child) => this.stop(child)));
  }

  /**
   * SIGTERM to one child, SIGKILL after 10 s; its exit is then no failure. The others keep running.
   * @param {Child} child
   * @returns {Promise<void>}
   */
  stop(child) {
    child.stopped = true;
    const { proc } = child;
    return new Promise((done) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return done();
      const kill = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      proc.once('exit', () => (clearTimeout(kill), done()));
      proc.kill('SIGTERM');
    });
  }

  /**
   * Warning and error lines the children logged, worth seeing next to their figures.
   * @returns {string[]}
   */
  problems() {
    return this.list.flatMap((c) =>
      c.output
        .split('\n')
        .filter((l) => /\b(WARN|ERROR)\b/.test(l))
        .map((l) => `${c.name}: ${l}`),
    );
  }
}

/**
 * Waits until the API at `base` counts `n` live workers of `deployment` (`GET /v1/models`), checking every
 * 100 ms; throws after `timeoutMs`.
 * @param {string} base
 * @param {string} deployment
 * @param {number} n
 * @param {number} [timeoutMs]
 */
export async function waitForLiveWorkers(base, deployment, n, timeoutMs = 60_000) {
  const until = now() + timeoutMs;
  for (;;) {
    const models = /** @type {{ data: Array<{ id: string, live_workers: number }> }} */ (
      await (await fetch(`${base}/v1/models`)).json()
    );
    if (models.data.find((m) => m.id === deployment)?.live_workers === n) return;
    if (now() > until) throw new Error(`the API does not see ${n} live workers of ${deployment}`);
    await sleep(100);
  }
}

/**
 * On SIGINT/SIGTERM: stop every child of every Children, run `cleanup`, exit 130. `on`, not `once`:
 * signal-exit (loaded by node-llama-cpp's dependencies) re-raises a signal it sees no other listener for,
 * which would kill the bench before its children are stopped.
 * @param {() => Promise<unknown>} [cleanup]
 */
export function stopChildrenOnSignal(cleanup = async () => {}) {
  let signalled = false;
  /** @param {NodeJS.Signals} sig */
  const onSignal = (sig) => {
    if (signalled) return;
    signalled = true;
    console.error(`\n${sig}: stopping the processes this bench started`);
    Promise.all([...Children.all].map((c) => c.stopAll()))
      .then(cleanup)
      .catch(() => undefined)
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
