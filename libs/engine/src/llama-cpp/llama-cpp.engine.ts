import { resolveChatWrapper, type ChatWrapper, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import type { EngineLogger } from '../core/engine-factory.js';
import type {
  EngineTokenizer,
  GenerationEngine,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
  HeldPromptChange,
} from '../core/generation-engine.js';
import { promptCacheRamEvents, reportKvCacheUsage, reportPromptCacheRam } from '../core/engine-metrics.js';
import { HostPromptCache, type HostCacheEvent } from './host-prompt-cache.js';
import { flashAttention, usableRuntime } from './llama-runtime.js';
import { assertNativeLayer, nativeContext } from './native-context.js';
import { LlamaTokenizer } from './llama-tokenizer.js';
import { longestTokenLength } from './prompt-bound.js';
import { PromptRenderer } from './prompt-renderer.js';
import { ReplyShapes } from './reply-shapes.js';
import { planRequest, type PlanningContext } from './request-plan.js';
import { runRequest, type RunContext } from './request-run.js';
import { PREFILL_CHUNK, RoundLoop } from './round-loop.js';
import type { PromptCacheMode } from './prompt-reuse.js';
import { SequenceSlots } from './sequence-slots.js';
import { templateThoughtOpening } from './thought-opening.js';
import { endOfGenerationTokens } from './token-biases.js';

export interface LlamaCppEngineOptions {
  modelPath: string;
  contextSize: number;
  parallel: number;
  threads: number;
  /** llama.cpp's flash attention; `auto` (the default) turns it on where the device supports it. */
  flashAttention?: 'auto' | 'on' | 'off';
  /** Use a GPU; refuse to load when none is usable unless `allowCpuFallback`. */
  gpu: boolean;
  allowCpuFallback?: boolean;
  /** `think`: split `<think>…</think>` out of chat replies as reasoning. */
  reasoningParser?: 'think' | null;
  /** How a finished reply's cells are reused (default `full`); see PromptCacheMode. */
  promptCache?: PromptCacheMode;
  /**
   * Bytes of host memory for prefixes cut off the sequences, restored when a later prompt begins with one
   * (llama-server's `--cache-ram`); 0 or absent: none, a prefix pushed out of every sequence is lost.
   */
  promptCacheRam?: number;
  /** The deployment its KV cache usage is reported under (`vllm:kv_cache_usage_perc`); none: not reported. */
  deployment?: string;
  /** A LoRA adapter (a GGUF path) the context applies to every sequence, scaled by `scale`. */
  lora?: { path: string; scale: number };
  /** Where the engine warns of what it works around (a prefix it could not keep in host memory). */
  log?: EngineLogger;
}

/**
 * One model, one context with `parallel` sequences; each reply (each choice of
 * a request) borrows a sequence and generates over the prompt rendered by the
 * model's template. One loop drives all running replies in rounds, so every
 * decode carries one token of each, as llama.cpp's own server batches them.
 */
export class LlamaCppEngine implements GenerationEngine {
  readonly continuesReplies: boolean;
  readonly tokenizer: EngineTokenizer;
  private readonly planning: PlanningContext;
  private readonly running: RunContext;
  private readonly rounds: Array<() => void> = [];
  private readonly heldPrompts: Array<(change: HeldPromptChange) => void> = [];
  private stopReporting: () => void = () => undefined;

  private constructor(
    model: LlamaModel,
    private readonly context: LlamaContext,
    // Resolved once: auto-detecting per request costs hundreds of milliseconds.
    chatWrapper: ChatWrapper,
    reasoningParser: 'think' | null,
    slots: SequenceSlots,
    private readonly host: HostPromptCache | null,
  ) {
    const shapes = new ReplyShapes(model.llama, model, chatWrapper);
    const opening = templateThoughtOpening(model, chatWrapper);
    this.continuesReplies = reasoningParser === null && !opening;
    this.planning = {
      model,
      contextSize: context.contextSize,
      sequences: context.totalSequences,
      longestToken: longestTokenLength(model),
      eogTokens: endOfGenerationTokens(model),
      reasoningParser,
      shapes,
      renderer: new PromptRenderer(model, chatWrapper, shapes, opening ? model.tokenize(opening, true) : []),
    };
    this.tokenizer = new LlamaTokenizer(model, this.planning.renderer, context.contextSize);
    const loop = new RoundLoop(context, nativeContext(context), {
      // The exact prompt cache needs prompts cut at fixed positions, and so does no cache at all: an
      // exact reply is the one `off` gives, token for token, only if both cut prompts in the same places.
      fixedChunks: slots.mode !== 'full',
      roundEnded: () => this.rounds.forEach((listener) => listener()),
    });
    this.running = { model, slots, loop };
  }

  static async load(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    const llama = await usableRuntime(options.gpu, options.allowCpuFallback);
    const model = await llama.loadModel({
      modelPath: options.modelPath,
      defaultContextFlashAttention: flashAttention(options.flashAttention),
    });
    // The model's own Jinja template, so prompts match llama.cpp's server byte for byte. Leading
    // whitespace of a reply is kept as llama.cpp keeps it: trimming it only when no stop string is
    // set made the same request's text depend on an unrelated field.
    const chatWrapper = resolveChatWrapper(model, {
      type: 'jinjaTemplate',
      customWrapperSettings: { jinjaTemplate: { trimLeadingWhitespaceInResponses: false } },
    });
    const context = await model.createContext({
      contextSize: options.contextSize,
      sequences: options.parallel,
      // Explicit: the default (max(4, cores)) was 10-30x slower with the prebuilt CPU binary.
      threads: options.threads,
      // The largest round: a prompt alone goes in 512 tokens at a time; with fixed chunks, two of them share it.
      batchSize: 2 * PREFILL_CHUNK,
      // Applied to the context: every sequence runs with it, so its requests never share a batch with others.
      ...(options.lora ? { lora: { adapters: [{ filePath: options.lora.path, scale: options.lora.scale }] } } : {}),
    });
    assertNativeLayer(model, context);
    // Every sequence is taken now and kept: each holds the cells of its last reply for the next request to reuse.
    const sequences = Array.from({ length: options.parallel }, () => context.getSequence());
    const mode = options.promptCache ?? 'full';
    const native = nativeContext(context);
    // Under `off` nothing is reused, so nothing is worth keeping either.
    const host =
      mode !== 'off' && (options.promptCacheRam ?? 0) > 0
        ? new HostPromptCache(native, options.promptCacheRam!, context.contextSize, options.log)
        : null;
    const slots = new SequenceSlots(sequences, context, native, mode, host);
    const engine = new LlamaCppEngine(model, context, chatWrapper, options.reasoningParser ?? null, slots, host);
    host?.onEvent((event) => engine.hostCacheEvent(event, options.deployment));
    const deployment = options.deployment;
    if (deployment) {
      const stopKv = reportKvCacheUsage(deployment, () => engine.kvCacheUsage());
      const stopRam = host ? reportPromptCacheRam(deployment, () => host.bytes) : () => undefined;
      engine.stopReporting = () => {
        stopKv();
        stopRam();
      };
    }
    return engine;
  }

  /** What the host cache did, counted under the deployment and told to whoever announces held prompts. */
  private hostCacheEvent(event: HostCacheEvent, deployment: string | undefined): void {
    // An entry dropped because it could not be read back was counted as the failure already.
    const counted = event.kind !== 'dropped' ? event.kind : event.reason === 'failed' ? null : event.reason;
    if (deployment && counted) promptCacheRamEvents.inc({ deployment, event: counted });
    const change: HeldPromptChange | null =
      event.kind === 'saved'
        ? { kind: 'kept', sequence: event.sequence, entry: event.entry }
        : event.kind === 'dropped'
          ? { kind: 'dropped', entry: event.entry }
          : null;
    if (change) this.heldPrompts.forEach((listener) => listener(change));
  }

  onHeldPrompts(listener: (change: HeldPromptChange) => void): void {
    this.heldPrompts.push(listener);
  }

  /** The prompt cache in host memory: its budget, and the bytes and entries it holds now (0 without one). */
  get hostCache(): { budget: number; bytes: number; entries: number } {
    return { budget: this.host?.budget ?? 0, bytes: this.host?.bytes ?? 0, entries: this.host?.entries ?? 0 };
  }

  /** The fraction of the context's KV cells its sequences hold (each sequence has `contextSize` of its own). */
  async kvCacheUsage(): Promise<number> {
    const cells = this.context.contextSize * this.planning.sequences;
    return (await this.running.slots.cellsInUse()) / cells;
  }

  onRound(listener: () => void): void {
    this.rounds.push(listener);
  }

  countPromptTokens(request: Pick<GenerateRequest, 'messages'>): number {
    return this.planning.renderer.chat(request).tokens.length;
  }

  /** Plans the request (prompts, checks, each choice's reply), then runs it on the context's sequences. */
  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const plan = await planRequest(request, this.planning);
    callbacks.onStart(plan.promptTokens);
    if (plan.noRoom) {
      return {
        finishReason: 'length',
        finishReasons: plan.choices.map(() => 'length'),
        usage: { promptTokens: plan.promptTokens, completionTokens: plan.sentTokens },
        aborted: false,
      };
    }
    return runRequest(plan, request, callbacks, this.running);
  }

  async dispose(): Promise<void> {
    this.stopReporting();
    await this.context.dispose();
    await this.host?.dispose();
    await this.planning.model.dispose();
  }
}
