// Child processes a bench starts and must always stop, also on failure or Ctrl-C.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { now } from './stats.mjs';

export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/**
 * The children of one bench run. `death` rejects when a child dies after it was
 * ready, so requests to it fail at once instead of hanging until their timeout.
 */
export class Children {
  static all = new Set();
  list = [];
  stopping = false;

  constructor(cwd) {
    this.cwd = cwd;
    Children.all.add(this);
    this.death = new Promise((_, reject) => (this.died = reject));
    this.death.catch(() => undefined);
  }

  /** Spawns `command args` and resolves once `readyLine` appears in its output. */
  launch(name, command, args, env, readyLine, timeoutMs = 300_000) {
    const started = now();
    const proc = spawn(command, args, { cwd: this.cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const child = { name, proc, output: '' };
    this.list.push(child);
    return new Promise((ok, fail) => {
      let ready = false;
      const timer = setTimeout(() => fail(new Error(`${name} not ready in ${timeoutMs} ms:\n${child.output.slice(-4000)}`)), timeoutMs);
      const onData = (chunk) => {
        child.output += chunk.toString();
        if (child.output.length > 200_000) child.output = child.output.slice(-100_000);
        if (!ready && readyLine.test(child.output)) {
          ready = true;
          clearTimeout(timer);
          child.readyMs = now() - started;
          ok(child);
        }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.on('error', (err) => fail(err));
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (!ready) fail(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${child.output.slice(-4000)}`));
        else if (!this.stopping) this.died(new Error(`${name} exited unexpectedly (${signal ?? code}); last output:\n${child.output.slice(-4000)}`));
      });
    });
  }

  /** Runs `work` and fails as soon as a child dies, whichever comes first. */
  async watch(work) {
    work.catch(() => undefined);
    return Promise.race([this.death, work]);
  }

  /** SIGTERM to every child still running, SIGKILL after 10 s. */
  async stopAll() {
    this.stopping = true;
    await Promise.all(
      this.list.map(
        ({ proc }) =>
          new Promise((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done();
            const kill = setTimeout(() => proc.kill('SIGKILL'), 10_000);
            proc.once('exit', () => (clearTimeout(kill), done()));
            proc.kill('SIGTERM');
          }),
      ),
    );
  }

  /** Warning and error lines the children logged, worth seeing next to their figures. */
  problems() {
    return this.list.flatMap((c) => c.output.split('\n').filter((l) => /\b(WARN|ERROR)\b/.test(l)).map((l) => `${c.name}: ${l}`));
  }
}

/**
 * On SIGINT/SIGTERM: stop every child of every Children, run `cleanup`, exit 130. `on`, not `once`:
 * signal-exit (loaded by node-llama-cpp's dependencies) re-raises a signal it sees no other listener for,
 * which would kill the bench before its children are stopped.
 */
export function stopChildrenOnSignal(cleanup = async () => {}) {
  let signalled = false;
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
