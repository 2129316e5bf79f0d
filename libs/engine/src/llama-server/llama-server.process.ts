import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamHttp } from '../openai-upstream/upstream-http.js';

/** How a child process ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export const describeExit = ({ code, signal }: ChildExit): string =>
  signal ? `killed by ${signal}` : `exit code ${code}`;

/** How much of the child's output is kept, to explain a failed start or a crash. */
const LOG_TAIL_CHARS = 16 * 1024;
/** Attempts at a free port: another process may take the one picked before the child binds it. */
const PORT_ATTEMPTS = 3;

/** A TCP port on 127.0.0.1 that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

let parentDeathWrapper: string[] | undefined;

/**
 * On Linux, `setpriv --pdeathsig KILL` (util-linux) has the kernel kill the child when the worker dies,
 * however it dies (SIGKILL and OOM kills included, which no exit handler sees); it execs the binary, so
 * the child keeps its pid. Checked once by running it; without it only the worker's exit handler and its
 * process group stop the child.
 */
function parentDeathCommand(): string[] {
  if (parentDeathWrapper === undefined) {
    const probe =
      process.platform === 'linux'
        ? spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore', timeout: 5000 })
        : undefined;
    parentDeathWrapper = probe?.status === 0 ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
  }
  return parentDeathWrapper;
}

export interface LlamaServerLaunch {
  binary: string;
  /** Everything but where it listens: model, slots, context, threads, ... */
  args: readonly string[];
  /** How long loading the model may take before the start counts as failed. */
  startTimeoutMs: number;
}

/**
 * One llama.cpp server child on a loopback port, with a key of its own so no other local process can use
 * it. It is started in the worker's process group (a signal to the group reaches it too) and, on Linux, set
 * to be killed when the worker dies; an exit handler kills it when the worker exits on its own.
 */
export class LlamaServerProcess {
  readonly exit: Promise<ChildExit>;
  private exited: ChildExit | null = null;
  private tail = '';
  private readonly killOnExit = () => this.child.kill('SIGKILL');

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly apiKey: string,
  ) {
    this.exit = new Promise((resolve) => {
      const ended = (exit: ChildExit) => {
        if (this.exited) return;
        this.exited = exit;
        process.off('exit', this.killOnExit);
        resolve(exit);
      };
      child.once('exit', (code, signal) => ended({ code, signal }));
      // A binary that could not be started at all emits no exit.
      child.once('error', (err) => {
        if (child.pid === undefined) {
          this.tail += `\n${err.message}`;
          ended({ code: null, signal: null });
        }
      });
    });
    process.on('exit', this.killOnExit);
    const keep = (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /** Starts the server and resolves once it answers /health with 200 (its model loaded). */
  static async start(launch: LlamaServerLaunch): Promise<LlamaServerProcess> {
    let lastError: Error | undefined;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      const port = await freePort();
      const apiKey = randomBytes(24).toString('hex');
      const [command, ...prefix] = [...parentDeathCommand(), launch.binary];
      const child = spawn(command!, [...prefix, ...launch.args, '--host', '127.0.0.1', '--port', String(port)], {
        // The key travels in the environment, not on the command line that `ps` shows.
        env: { ...process.env, LLAMA_API_KEY: apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const server = new LlamaServerProcess(child, port, apiKey);
      try {
        await server.healthy(launch.startTimeoutMs);
        return server;
      } catch (err) {
        await server.stop(1000);
        lastError = err as Error;
        // Another process took the port between our look and its bind: try another.
        if (!/couldn't bind|address already in use/i.test(server.tail)) break;
      }
    }
    throw lastError ?? new Error('llama-server did not start');
  }

  /** The base URL of its OpenAI API. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exited === null;
  }

  /** The last lines it printed. */
  logTail(lines = 20): string {
    return this.tail.trimEnd().split('\n').slice(-lines).join('\n');
  }

  private async healthy(timeoutMs: number): Promise<void> {
    const http = new UpstreamHttp(new URL(`http://127.0.0.1:${this.port}/`), { keepAlive: false, idleTimeoutMs: 5000 });
    const deadline = Date.now() + timeoutMs;
    try {
      while (Date.now() < deadline) {
        if (this.exited)
          throw new Error(`llama-server exited while starting (${describeExit(this.exited)}):\n${this.logTail()}`);
        try {
          const answer = await http.get('/health');
          answer.body.resume();
          // 503 while the model loads; 200 once it serves.
          if (answer.status === 200) return;
        } catch {
          // Not listening yet.
        }
        await Promise.race([sleep(100), this.exit]);
      }
      throw new Error(`llama-server did not become healthy within ${timeoutMs / 1000} s:\n${this.logTail()}`);
    } finally {
      http.close();
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
  async stop(graceMs: number): Promise<ChildExit> {
    if (this.exited) return this.exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exit;
    } finally {
      clearTimeout(timer);
    }
  }
}
