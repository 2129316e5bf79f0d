import { randomInt } from 'node:crypto';
import {
  getLlama,
  type Llama,
  resolveChatWrapper,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import {
  GenerationEngine,
  EngineInputError,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
} from '../core/generation-engine.js';
import { toChatHistory, toSamplingOptions } from './llama-options.js';
import { LlamaGeneration, type GenerationOutcome, type GenerationRuntime } from './llama-generation.js';
import { NativeBatcher, PREFILL_CHUNK } from './native-batcher.js';
import { SequenceSlots, type PromptCacheMode } from './sequence-slots.js';
import { assertNativeLayer, nativeContext } from './native-context.js';
import { LockstepScheduler } from './lockstep-scheduler.js';
import { promptOpensThought, ReasoningSplitter } from '../core/reasoning-splitter.js';
import { rawPromptTokens } from './raw-prompt.js';
import { ReplyShapes } from './reply-shapes.js';
import { templateThoughtOpening } from './thought-opening.js';
import { assertPromptCouldFit, longestTokenLength, promptChars } from './prompt-bound.js';
import { endOfGenerationTokens, requestBiases } from './token-biases.js';

/**
 * node-llama-cpp turns flash attention off unless asked; llama.cpp (and llama-server) default to
 * `auto`, which turns it on for the CPU. On a small CPU model it was ~25% faster per token.
 */
export function flashAttention(option: 'auto' | 'on' | 'off' | undefined): 'auto' | boolean {
  return option === 'on' ? true : option === 'off' ? false : 'auto';
}

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
  /** Keep each reply's tokens in its sequence and reuse the longest common prefix for the next request (default on). */
  /** How a finished reply's cells are reused (default `exact`); see PromptCacheMode. */
  promptCache?: PromptCacheMode;
}

/** A prompt to generate from, rendered and tokenized, with what ends a reply to it. */
interface RenderedPrompt {
  tokens: Token[];
  /** Tokens of the prompt as the request gave it, before any continued reply text. */
  promptTokens: number;
  stops: string[];
  endTokens: Set<Token>;
  /** The prompt leaves the model inside a thought segment. */
  opensThought: boolean;
}

/** A GPU was asked for and none is usable on this machine. */
export class GpuUnavailableError extends Error {
  constructor() {
    super(
      'This worker serves the gpu pool, but no usable GPU (CUDA, Vulkan or Metal) was found. ' +
        'Run it on a GPU machine, serve the cpu pool instead, or set ALLOW_CPU_FALLBACK=1 to run gpu deployments on the CPU.',
    );
    this.name = 'GpuUnavailableError';
  }
}

const runtimes = new Map<boolean, Promise<Llama>>();

/** One llama.cpp runtime per process and backend choice, shared by every model the worker loads. */
export function runtime(gpu: boolean): Promise<Llama> {
  let llama = runtimes.get(gpu);
  if (!llama) {
    // build: 'never' — a failed binary check must not silently compile llama.cpp for minutes.
    llama = getLlama({ build: 'never', gpu: gpu ? 'auto' : false });
    runtimes.set(gpu, llama);
  }
  return llama;
}

/**
 * One model, one context with `parallel` sequences; each reply (each choice of
 * a request) borrows a sequence and generates over the prompt rendered by the
 * model's template. A scheduler steps all running replies together, so every
 * decode carries one token of each, as llama.cpp's own server batches them.
 */
export class LlamaCppEngine implements GenerationEngine {
  private readonly scheduler = new LockstepScheduler();
  private readonly shapes: ReplyShapes;
  // Found once: ignore_eos and min_tokens ban them.
  private readonly eogTokens: Token[];
  readonly continuesReplies: boolean;
  /** Tokens the template opens each reply's thought with; node-llama-cpp's rendering leaves them out. */
  private readonly thoughtOpening: Token[];
  private readonly runtime: GenerationRuntime;
  /** The most characters one token stands for: what a prompt's length is checked against before tokenizing. */
  private readonly longestToken: number;

  private constructor(
    llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    // Resolved once: auto-detecting per request costs hundreds of milliseconds.
    private readonly chatWrapper: ChatWrapper,
    private readonly reasoningParser: 'think' | null,
    private readonly slots: SequenceSlots,
  ) {
    this.shapes = new ReplyShapes(llama, model, chatWrapper);
    this.eogTokens = endOfGenerationTokens(model);
    const opening = templateThoughtOpening(model, chatWrapper);
    this.thoughtOpening = opening ? model.tokenize(opening, true) : [];
    this.continuesReplies = reasoningParser === null && !opening;
    this.longestToken = longestTokenLength(model);
    const native = nativeContext(context);
    this.runtime = { native, batcher: new NativeBatcher(context, native) };
  }

  static async load(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    let llama = await runtime(options.gpu);
    if (options.gpu && llama.gpu === false) {
      if (!options.allowCpuFallback) throw new GpuUnavailableError();
      llama = await runtime(false);
    }
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
      // Two prefill chunks: a chunk of a new prompt and the running replies' tokens share a batch.
      batchSize: 2 * PREFILL_CHUNK,
    });
    assertNativeLayer(model, context);
    // Every sequence is taken now and kept: each holds the cells of its last reply for the next request to reuse.
    const sequences = Array.from({ length: options.parallel }, () => context.getSequence());
    const slots = new SequenceSlots(sequences, context, nativeContext(context), options.promptCache ?? 'exact');
    return new LlamaCppEngine(llama, model, context, chatWrapper, options.reasoningParser ?? null, slots);
  }

  countPromptTokens(request: Pick<GenerateRequest, 'messages'>): number {
    return this.renderChat(request).tokens.length;
  }

  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const partial = request.continueFrom?.text ?? '';
    assertPromptCouldFit(promptChars(request, partial), this.context.contextSize, this.longestToken);
    const prompts = request.prompts
      ? request.prompts.map((p) => this.renderText(p))
      : [this.renderChat(request, partial)];
    const contextSize = this.context.contextSize;
    for (const prompt of prompts) {
      const asked = request.maxTokens === undefined ? '' : ` and max_tokens ${request.maxTokens}`;
      if (prompt.tokens.length >= contextSize || prompt.promptTokens + (request.maxTokens ?? 0) > contextSize) {
        throw new EngineInputError(
          `The prompt is ${prompt.promptTokens} tokens${asked}, which does not fit this model's context of ${contextSize} tokens.`,
          'context_length_exceeded',
        );
      }
    }
    const n = request.n ?? 1;
    const choices = prompts.length * n;
    if (choices > this.context.totalSequences) {
      throw new EngineInputError(
        `${choices} choices asked for; this deployment generates at most ${this.context.totalSequences} at once.`,
        'invalid_value',
      );
    }
    const promptTokens = prompts.reduce((sum, p) => sum + p.promptTokens, 0);
    // A resumed reply counts the tokens already sent against max_tokens and in usage, as they were generated.
    const sentTokens = request.continueFrom?.tokens ?? 0;
    // Never past the context: a reply that fills it ends with "length" instead of shifting context forever.
    const budgetFor = (p: RenderedPrompt) =>
      Math.min((request.maxTokens ?? Infinity) - sentTokens, contextSize - p.tokens.length);
    const chat = !request.prompts;
    const shape = chat ? await this.shapes.shape(request, budgetFor(prompts[0]!)) : ({ kind: 'text' } as const);
    const minTokens = request.sampling.ignoreEos ? Infinity : (request.sampling.minTokens ?? 0);
    const ending = [...new Set([...this.eogTokens, ...prompts.flatMap((p) => [...p.endTokens])])];
    const bias = requestBiases(this.model, request.sampling.logitBias, ending, minTokens > 0);
    const seed = request.sampling.seed ?? randomInt(2 ** 31);
    callbacks.onStart(promptTokens);
    if (prompts.every((p) => budgetFor(p) <= 0)) {
      return {
        finishReason: 'length',
        finishReasons: Array(choices).fill('length'),
        usage: { promptTokens, completionTokens: sentTokens },
        aborted: false,
      };
    }

    const leases = await this.slots.acquire(
      Array.from({ length: choices }, (_, index) => prompts[Math.floor(index / n)]!.tokens),
    );
    const outcomes: Array<GenerationOutcome | undefined> = [];
    const reused: number[] = [];
    // Set once the request is over (a choice failed): a choice still waiting to share cells starts nothing.
    let over = false;
    try {
      const generations = leases.map(async (lease, index) => {
        const prompt = prompts[Math.floor(index / n)]!;
        reused[index] = await lease.ready();
        if (over) throw new Error('The request ended before this choice started.');
        const generation = new LlamaGeneration(
          this.model,
          lease.sequenceId,
          {
            prompt: prompt.tokens,
            reused: reused[index],
            progressed: (position) => lease.progressed(position),
            budget: budgetFor(prompt),
            stops: [...request.stop, ...prompt.stops],
            endTokens: request.sampling.ignoreEos ? new Set() : prompt.endTokens,
            // Each choice samples on its own seed, so n choices differ and each one repeats with the request's seed.
            evaluate: (recent) => toSamplingOptions({ ...request.sampling, seed: seed + index }, recent),
            bias,
            minTokens,
            logprobs: request.logprobs,
            shape:
              index === 0 || shape.kind !== 'tool'
                ? shape
                : { kind: 'tool', call: { ...shape.call, callId: `${shape.call.callId}_${index}` } },
            reasoning: chat && this.reasoningParser ? new ReasoningSplitter(prompt.opensThought) : undefined,
            signal: request.signal,
            emit: (piece) =>
              callbacks.onOutput({
                choice: index,
                ...piece,
                tokens: piece.tokens === undefined ? undefined : sentTokens + piece.tokens,
              }),
          },
          this.runtime,
        );
        this.scheduler.start(generation);
        return generation.outcome.then((outcome) => (outcomes[index] = outcome));
      });
      const ended: GenerationOutcome[] = await Promise.all(generations).catch(async (err: unknown) => {
        // Every choice is settled before the leases go back, so none runs on a sequence given away.
        over = true;
        await Promise.allSettled(generations);
        throw err;
      });
      const finishReasons: FinishReason[] = ended.map((o) => o.finishReason);
      // Each prompt's first choice is where its reuse counts (the prompt is counted once in usage too). A
      // resumed reply's prompt also holds what was already sent, which usage does not count as prompt.
      const cachedTokens = prompts.reduce((sum, p, i) => sum + Math.min(reused[i * n] ?? 0, p.promptTokens), 0);
      return {
        finishReason: finishReasons[0]!,
        finishReasons,
        usage: {
          promptTokens,
          completionTokens: sentTokens + ended.reduce((sum, o) => sum + o.generatedTokens, 0),
          cachedTokens,
        },
        aborted: ended.some((o) => o.aborted),
        ...(this.slots.reusing ? { sequences: leases.map((lease) => lease.sequenceId) } : {}),
      };
    } finally {
      // A sequence whose generation failed holds cells nobody can name: it is emptied, never reused.
      leases.forEach((lease, index) => {
        const cached = outcomes[index]?.cached;
        lease.release(cached ? { tokens: cached, prompt: prompts[Math.floor(index / n)]!.tokens.length } : null);
      });
    }
  }

  /**
   * A chat prompt in the model's own template, tokenized once, with what ends a turn in that template:
   * triggers that start with a special token end at that token, textual ones become stop strings.
   * With tools, the template describes them; a forced call's opening is written for the model.
   */
  private renderChat(
    request: Pick<GenerateRequest, 'messages' | 'tools' | 'toolChoice'>,
    partial = '',
  ): RenderedPrompt {
    const tools = request.tools ?? [];
    const functions: ChatModelFunctions | undefined = tools.length
      ? Object.fromEntries(
          tools.map((t) => [
            t.name,
            { description: t.description, params: t.parameters as ChatModelFunctions[string]['params'] },
          ]),
        )
      : undefined;
    const state = this.chatWrapper.generateContextState({
      chatHistory: toChatHistory(request.messages, partial),
      availableFunctions: functions,
      documentFunctionParams: true,
    });
    const stops: string[] = [];
    const endTokens = new Set<Token>();
    for (const trigger of state.stopGenerationTriggers) {
      const first = trigger.values[0];
      if (first === undefined) continue;
      if (typeof first === 'string' && trigger.values.every((v) => typeof v === 'string'))
        stops.push(trigger.values.join(''));
      else if (typeof first !== 'string') endTokens.add(trigger.tokenize(this.model.tokenizer)[0]!);
    }
    const tokens = state.contextText.tokenize(this.model.tokenizer);
    const promptTokens = partial ? this.renderChat({ ...request }).tokens.length : tokens.length;
    const thought = partial ? [] : this.thoughtOpening;
    const opening = [...thought, ...this.shapes.forcedCallOpening(tools, request.toolChoice)];
    const opensThought = thought.length > 0 || promptOpensThought(state.contextText.toString());
    return {
      tokens: [...tokens, ...opening],
      promptTokens: promptTokens + thought.length,
      stops: stops.filter(Boolean),
      endTokens,
      opensThought,
    };
  }

  /** A raw prompt (legacy completions): its text as it is, no template, special-token text kept as text. */
  private renderText(text: string): RenderedPrompt {
    const tokens = rawPromptTokens(text, {
      bos: this.model.tokens.bos,
      prependBos: this.model.tokens.shouldPrependBosToken,
      tokenize: (t) => this.model.tokenize(t, false),
    });
    return { tokens, promptTokens: tokens.length, stops: [], endTokens: new Set(), opensThought: false };
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
