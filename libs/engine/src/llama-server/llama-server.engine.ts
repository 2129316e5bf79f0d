import { setTimeout as sleep } from 'node:timers/promises';
import type { FinishReason } from '@conveyor/queue';
import type {
  GenerationEngine,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
} from '../core/generation-engine.js';
import { uncachedRetries } from '../core/engine-metrics.js';
import { describeExit, type LlamaServerProcess } from './llama-server.process.js';
import { promptOpensThought } from '../core/reasoning-splitter.js';
import { UpstreamError } from '../openai-upstream/upstream-error.js';
import { startServer, upstreamOf, type Live } from './llama-server.live.js';
import type { LlamaServerEngineOptions } from './llama-server.options.js';
import { chatTemplate, renderGenerationPrompt } from './llama-server.template.js';
import { lostMediaChunk } from './lost-media-chunk.js';

/** A server that ran this long before it died restarts after the shortest wait again. */
const STABLE_AFTER_MS = 60_000;

/**
 * A deployment served by a llama.cpp server the worker runs as its child, for what node-llama-cpp cannot
 * run (a vision projector), driven over loopback HTTP by the OpenAI upstream engine. The child is
 * supervised: when it dies, the generations in flight fail with a retryable error (the queue runs them
 * again, and a reply continues from what was sent), and it is restarted after a wait that grows while
 * restarts fail. Disposing stops it: SIGTERM, then SIGKILL after a grace period.
 */
export class LlamaServerEngine implements GenerationEngine {
  readonly continuesReplies: boolean;
  private live: Live | null;
  /** Settles with the running server; pending while one is being (re)started. */
  private ready: Promise<Live>;
  private disposed = false;
  private readonly stopping = new AbortController();
  private restarts = 0;

  private constructor(
    private readonly options: LlamaServerEngineOptions,
    first: Live,
    private readonly opensThought: boolean,
    continuesReplies: boolean,
  ) {
    this.live = first;
    this.ready = Promise.resolve(first);
    this.continuesReplies = continuesReplies;
    this.supervise(first);
  }

  /** Starts the server; rejects, with what it printed, when it does not come up. */
  static async start(options: LlamaServerEngineOptions): Promise<LlamaServerEngine> {
    let server: LlamaServerProcess | undefined;
    try {
      server = await startServer(options);
      // Whether the template opens a thought for each reply: read once from the server, which renders it.
      const opensThought = promptOpensThought(renderGenerationPrompt(await chatTemplate(server)));
      const live = upstreamOf(server, options, opensThought);
      // A thought the template opens sits in the prompt, not in the text sent: a reply continued from
      // its text alone would lose it, as in process.
      return new LlamaServerEngine(options, live, opensThought, live.engine.continuesReplies && !opensThought);
    } catch (err) {
      await server?.stop(options.stopGraceMs ?? 5000);
      throw err;
    }
  }

  /** The running server's pid (tests, and operators reading the logs); undefined while it restarts. */
  get pid(): number | undefined {
    return this.live?.server.pid;
  }

  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const live = await this.whenReady(request.signal);
    if (!live) return abortedBeforeStart(request);
    try {
      return await this.generateOn(live, request, callbacks);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      // The connection broke: when the server died under it, say so (its exit may be seen a moment later).
      const exit = await Promise.race([live.server.exit, sleep(250, null)]);
      if (exit) {
        throw new UpstreamError(
          `llama-server exited during this generation (${describeExit(exit)}); it is being restarted and the request will be retried`,
        );
      }
      throw err;
    }
  }

  /**
   * Generates on the running server. A request that llama-server fails, before any output, with the error
   * of its multimodal prompt cache (`lostMediaChunk`) is sent once more with `cache_prompt: false`: every
   * retry with the cache on would fail the same way, since the slot's cells that trip it are still there.
   */
  private async generateOn(
    live: Live,
    request: GenerateRequest,
    callbacks: GenerateCallbacks,
  ): Promise<GenerateResult> {
    let started = false;
    let produced = false;
    const once: GenerateCallbacks = {
      onStart: (promptTokens) => {
        if (started) return;
        started = true;
        callbacks.onStart(promptTokens);
      },
      onOutput: (piece) => {
        produced = true;
        callbacks.onOutput(piece);
      },
    };
    try {
      return await live.engine.generate(request, once);
    } catch (err) {
      const reason = produced ? null : lostMediaChunk(err);
      if (!reason) throw err;
      const deployment = this.options.deployment ?? this.options.modelPath;
      uncachedRetries.inc({ deployment, reason });
      this.options.logger.warn(
        `llama-server failed a request in its prompt cache (${(err as Error).message}); sending it again without the cache`,
      );
      return live.engine.generate(request, once, { cache_prompt: false });
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.stopping.abort();
    const live = this.live;
    this.live = null;
    if (live) {
      await live.engine.dispose();
      await live.server.stop(this.options.stopGraceMs ?? 5000);
    }
  }

  /** The running server; waits for a restart to finish, up to a limit. Null when the request was aborted meanwhile. */
  private async whenReady(signal: AbortSignal | undefined): Promise<Live | null> {
    const timeoutMs = this.options.readyTimeoutMs ?? 120_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.disposed) throw new UpstreamError('llama-server is stopped: the worker is shutting down');
      if (this.live?.server.running) return this.live;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new UpstreamError(`llama-server is restarting and was not ready within ${timeoutMs / 1000} s`);
      // Wakes when a restart settles, the request is aborted, the engine is disposed, or time is up; then looks again.
      const wait = new AbortController();
      const stop = () => wait.abort();
      signal?.addEventListener('abort', stop, { once: true });
      this.stopping.signal.addEventListener('abort', stop, { once: true });
      try {
        await Promise.race([this.ready.catch(() => undefined), sleep(left, undefined, { signal: wait.signal })]);
      } catch {
        // The wait was cut short; the loop says why.
      } finally {
        wait.abort();
        signal?.removeEventListener('abort', stop);
        this.stopping.signal.removeEventListener('abort', stop);
      }
      if (signal?.aborted) return null;
    }
  }

  /** Restarts the server when it exits on its own, until the engine is disposed. */
  private supervise(live: Live): void {
    void live.server.exit.then((exit) => {
      if (this.disposed) return;
      void live.engine.dispose();
      this.live = null;
      const ranFor = Date.now() - live.startedAt;
      if (ranFor >= STABLE_AFTER_MS) this.restarts = 0;
      this.options.logger.warn(
        `llama-server (${this.options.modelPath}) exited (${describeExit(exit)}); restarting it. Its last output:\n${live.server.logTail()}`,
      );
      this.ready = this.restart();
      // Generations wait on it; a failed wait is reported to them, not here.
      this.ready.catch(() => undefined);
    });
  }

  private async restart(): Promise<Live> {
    const { min, max } = this.options.restartDelayMs ?? { min: 1000, max: 30_000 };
    const logger = this.options.logger;
    for (;;) {
      // Waits longer after each failed start, so a server that cannot start does not spin.
      const delay = Math.min(max, min * 2 ** this.restarts);
      this.restarts++;
      await sleep(delay, undefined, { signal: this.stopping.signal });
      try {
        const live = upstreamOf(await startServer(this.options), this.options, this.opensThought);
        if (this.disposed) {
          await live.server.stop(this.options.stopGraceMs ?? 5000);
          throw new Error('disposed');
        }
        this.live = live;
        this.supervise(live);
        logger.log(`llama-server restarted (pid ${live.server.pid}, port ${live.server.port})`);
        return live;
      } catch (err) {
        if (this.disposed) throw err;
        logger.warn(`llama-server failed to restart: ${(err as Error).message}`);
      }
    }
  }
}

function abortedBeforeStart(request: GenerateRequest): GenerateResult {
  const choices = (request.prompts?.length ?? 1) * (request.n ?? 1);
  const finishReasons = Array<FinishReason>(choices).fill('stop');
  return {
    finishReason: 'stop',
    finishReasons,
    usage: { promptTokens: 0, completionTokens: request.continueFrom?.tokens ?? 0 },
    aborted: true,
  };
}
