import { setTimeout as sleep } from 'node:timers/promises';
import { Template } from '@huggingface/jinja';
import type { FinishReason } from '@conveyor/queue';
import type {
  GenerationEngine,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
} from '../core/generation-engine.js';
import type { EngineLogger } from '../core/engine-factory.js';
import type { ImageSource } from '../core/image-source.port.js';
import { uncachedRetries } from '../core/engine-metrics.js';
import { describeExit, LlamaServerProcess } from './llama-server.process.js';
import { OpenAiUpstreamEngine } from '../openai-upstream/openai-upstream.engine.js';
import { promptOpensThought } from '../core/reasoning-splitter.js';
import { UpstreamError } from '../openai-upstream/openai-wire.js';
import { jsonOrText, readText, UpstreamHttp } from '../openai-upstream/upstream-http.js';

export interface LlamaServerEngineOptions {
  /** The deployment's id, as metrics name it; the model's path when absent. */
  deployment?: string;
  /** The llama-server binary (see findLlamaServer). */
  binary: string;
  modelPath: string;
  /** The vision projector's GGUF; null: text only. */
  mmprojPath: string | null;
  /** The most tokens one image may take; null: the projector's own. */
  imageMaxTokens: number | null;
  /** Tokens of context per sequence (llama-server's slot). */
  contextSize: number;
  parallel: number;
  threads: number;
  flashAttention: 'auto' | 'on' | 'off';
  /** Offload to a GPU (llama-server's own choice of layers); false keeps everything on the CPU. */
  gpu: boolean;
  /** `think`: the thought segment (`<think>…</think>`) comes back as reasoning; otherwise it stays in the text. */
  reasoningParser: 'think' | null;
  images: ImageSource | null;
  logger: EngineLogger;
  /** How long loading the model may take. */
  startTimeoutMs?: number;
  /** First and longest wait before a restart; the wait doubles while restarts keep failing. */
  restartDelayMs?: { min: number; max: number };
  /** How long a generation waits for a restarting server before it fails (and is retried). */
  readyTimeoutMs?: number;
  /** How long the server may take to stop after SIGTERM before it is killed. */
  stopGraceMs?: number;
}

/** A server that ran this long before it died restarts after the shortest wait again. */
const STABLE_AFTER_MS = 60_000;

/** One running server and the upstream engine that speaks to it. */
interface Live {
  server: LlamaServerProcess;
  engine: OpenAiUpstreamEngine;
  startedAt: number;
}

/** The command line of a deployment's server, but where it listens. */
export function llamaServerArgs(o: LlamaServerEngineOptions): string[] {
  const args = [
    '-m',
    o.modelPath,
    '-np',
    String(o.parallel),
    // llama-server divides its context among its slots: each gets contextSize, as in process.
    '-c',
    String(o.contextSize * o.parallel),
    '-t',
    String(o.threads),
    '-fa',
    o.flashAttention,
    // The model's own chat template, as node-llama-cpp renders it in process.
    '--jinja',
    '--no-webui',
    // Thoughts stay in the text: the engine splits them out itself, as in process, for any template
    // (llama.cpp's own parser only knows the templates it recognizes).
    '--reasoning-format',
    'none',
  ];
  if (o.mmprojPath) args.push('--mmproj', o.mmprojPath);
  if (o.mmprojPath && o.imageMaxTokens !== null) args.push('--image-max-tokens', String(o.imageMaxTokens));
  if (!o.gpu) args.push('-ngl', '0', '--no-mmproj-offload');
  return args;
}

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

/**
 * Whether llama-server failed a request in its multimodal prompt cache, and how (the metric's reason).
 * llama.cpp (de3ff81) keeps a slot's cells up to the longest prefix they share with the new prompt; when
 * that prefix ends between two images that lay side by side in the cells (a prompt with the first of
 * them and then text, after one with both), `server_tokens::keep_first` takes the cut for one in the
 * middle of an image and throws "Chunk not found". Without the cache nothing is cut.
 */
export function lostMediaChunk(err: unknown): string | null {
  if (!(err instanceof UpstreamError) || err.status !== 500) return null;
  return /chunk not found/i.test(err.message) ? 'chunk_not_found' : null;
}

function startServer(options: LlamaServerEngineOptions): Promise<LlamaServerProcess> {
  return LlamaServerProcess.start({
    binary: options.binary,
    args: llamaServerArgs(options),
    startTimeoutMs: options.startTimeoutMs ?? 10 * 60_000,
  });
}

function upstreamOf(server: LlamaServerProcess, options: LlamaServerEngineOptions, opensThought: boolean): Live {
  const engine = new OpenAiUpstreamEngine({
    url: server.url,
    apiKey: server.apiKey,
    model: 'default',
    dialect: 'llama-server',
    images: options.images,
    maxChoices: options.parallel,
    keepAlive: false,
    name: 'llama-server',
    thoughts: options.reasoningParser === 'think' ? { opensThought } : undefined,
  });
  return { server, engine, startedAt: Date.now() };
}

/** A template's generation prompt for one user turn, to see whether it opens a thought; empty when it cannot be rendered. */
function renderGenerationPrompt(template: string): string {
  try {
    return new Template(template).render({
      messages: [{ role: 'user', content: 'x' }],
      add_generation_prompt: true,
      bos_token: '',
      eos_token: '',
    });
  } catch {
    return '';
  }
}

/** The chat template the server renders prompts with (its /props). */
async function chatTemplate(server: LlamaServerProcess): Promise<string> {
  const http = new UpstreamHttp(new URL(`http://127.0.0.1:${server.port}/`), {
    keepAlive: false,
    idleTimeoutMs: 10_000,
  });
  try {
    const answer = await http.get('/props', undefined, { authorization: `Bearer ${server.apiKey}` });
    const props = jsonOrText(await readText(answer.body));
    const template =
      typeof props === 'object' && props !== null ? (props as { chat_template?: unknown }).chat_template : '';
    return typeof template === 'string' ? template : '';
  } finally {
    http.close();
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
