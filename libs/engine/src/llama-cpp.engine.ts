import { randomInt } from 'node:crypto';
import {
  getLlama,
  type Llama,
  resolveChatWrapper,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import { ChatEngine, EngineInputError, GenerateCallbacks, GenerateRequest, GenerateResult } from './chat-engine.js';
import { toChatHistory, toSamplingOptions } from './llama-options.js';
import { LlamaGeneration, type GenerationOutcome, type GenerationRuntime } from './llama-generation.js';
import { NativeBatcher } from './native-batcher.js';
import { assertNativeLayer, nativeContext } from './native-context.js';
import { LockstepScheduler } from './lockstep-scheduler.js';
import { promptOpensThought, ReasoningSplitter } from './reasoning-splitter.js';
import { ReplyShapes } from './reply-shapes.js';
import { templateThoughtOpening } from './thought-opening.js';
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
export class LlamaCppEngine implements ChatEngine {
  private readonly scheduler = new LockstepScheduler();
  private readonly shapes: ReplyShapes;
  // Found once: ignore_eos and min_tokens ban them.
  private readonly eogTokens: Token[];
  readonly continuesReplies: boolean;
  /** Tokens the template opens each reply's thought with; node-llama-cpp's rendering leaves them out. */
  private readonly thoughtOpening: Token[];
  private readonly runtime: GenerationRuntime;

  private constructor(
    llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    // Resolved once: auto-detecting per request costs hundreds of milliseconds.
    private readonly chatWrapper: ChatWrapper,
    private readonly reasoningParser: 'think' | null,
  ) {
    this.shapes = new ReplyShapes(llama, model, chatWrapper);
    this.eogTokens = endOfGenerationTokens(model);
    const opening = templateThoughtOpening(model, chatWrapper);
    this.thoughtOpening = opening ? model.tokenize(opening, true) : [];
    this.continuesReplies = reasoningParser === null && !opening;
    const native = nativeContext(context);
    this.runtime = { native, batcher: new NativeBatcher(context, native) };
  }

  static async load(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    let llama = await runtime(options.gpu);
    if (options.gpu && llama.gpu === false) {
      if (!options.allowCpuFallback) throw new GpuUnavailableError();
      llama = await runtime(false);
    }
    const model = await llama.loadModel({ modelPath: options.modelPath, defaultContextFlashAttention: flashAttention(options.flashAttention) });
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
    });
    assertNativeLayer(model, context);
    return new LlamaCppEngine(llama, model, context, chatWrapper, options.reasoningParser ?? null);
  }

  countPromptTokens(request: Pick<GenerateRequest, 'messages'>): number {
    return this.renderChat(request).tokens.length;
  }

  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const partial = request.continueFrom ?? '';
    const prompts = request.prompts ? request.prompts.map((p) => this.renderText(p)) : [this.renderChat(request, partial)];
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
      throw new EngineInputError(`${choices} choices asked for; this deployment generates at most ${this.context.totalSequences} at once.`, 'invalid_value');
    }
    const promptTokens = prompts.reduce((sum, p) => sum + p.promptTokens, 0);
    // A resumed reply counts the tokens already sent against max_tokens and in usage.
    const sentTokens = partial ? this.model.tokenize(partial).length : 0;
    // Never past the context: a reply that fills it ends with "length" instead of shifting context forever.
    const budgetFor = (p: RenderedPrompt) => Math.min((request.maxTokens ?? Infinity) - sentTokens, contextSize - p.tokens.length);
    const chat = !request.prompts;
    const shape = chat ? await this.shapes.shape(request, budgetFor(prompts[0]!)) : ({ kind: 'text' } as const);
    const minTokens = request.sampling.ignoreEos ? Infinity : (request.sampling.minTokens ?? 0);
    const ending = [...new Set([...this.eogTokens, ...prompts.flatMap((p) => [...p.endTokens])])];
    const bias = requestBiases(this.model, request.sampling.logitBias, ending, minTokens > 0);
    const seed = request.sampling.seed ?? randomInt(2 ** 31);
    callbacks.onStart(promptTokens);
    if (prompts.every((p) => budgetFor(p) <= 0)) {
      return { finishReason: 'length', finishReasons: Array(choices).fill('length'), usage: { promptTokens, completionTokens: sentTokens }, aborted: false };
    }

    const sequences = await this.acquireSequences(choices);
    try {
      const generations = sequences.map((sequence, index) => {
        const prompt = prompts[Math.floor(index / n)]!;
        const generation = new LlamaGeneration(this.model, sequence, {
          prompt: prompt.tokens,
          budget: budgetFor(prompt),
          stops: [...request.stop, ...prompt.stops],
          endTokens: request.sampling.ignoreEos ? new Set() : prompt.endTokens,
          // Each choice samples on its own seed, so n choices differ and each one repeats with the request's seed.
          evaluate: (recent) => toSamplingOptions({ ...request.sampling, seed: seed + index }, recent),
          bias,
          minTokens,
          logprobs: request.logprobs,
          shape: index === 0 || shape.kind !== 'tool' ? shape : { kind: 'tool', call: { ...shape.call, callId: `${shape.call.callId}_${index}` } },
          reasoning: chat && this.reasoningParser ? new ReasoningSplitter(prompt.opensThought) : undefined,
          signal: request.signal,
          emit: (piece) => callbacks.onOutput({ choice: index, ...piece }),
        }, this.runtime);
        this.scheduler.start(generation);
        return generation.outcome;
      });
      const outcomes: GenerationOutcome[] = await Promise.all(generations);
      const finishReasons: FinishReason[] = outcomes.map((o) => o.finishReason);
      return {
        finishReason: finishReasons[0]!,
        finishReasons,
        usage: { promptTokens, completionTokens: sentTokens + outcomes.reduce((sum, o) => sum + o.generatedTokens, 0) },
        aborted: outcomes.some((o) => o.aborted),
      };
    } finally {
      for (const sequence of sequences) sequence.dispose();
    }
  }

  /**
   * A chat prompt in the model's own template, tokenized once, with what ends a turn in that template:
   * triggers that start with a special token end at that token, textual ones become stop strings.
   * With tools, the template describes them; a forced call's opening is written for the model.
   */
  private renderChat(request: Pick<GenerateRequest, 'messages' | 'tools' | 'toolChoice'>, partial = ''): RenderedPrompt {
    const tools = request.tools ?? [];
    const functions: ChatModelFunctions | undefined = tools.length
      ? Object.fromEntries(tools.map((t) => [t.name, { description: t.description, params: t.parameters as ChatModelFunctions[string]['params'] }]))
      : undefined;
    const state = this.chatWrapper.generateContextState({ chatHistory: toChatHistory(request.messages, partial), availableFunctions: functions, documentFunctionParams: true });
    const stops: string[] = [];
    const endTokens = new Set<Token>();
    for (const trigger of state.stopGenerationTriggers) {
      const first = trigger.values[0];
      if (first === undefined) continue;
      if (typeof first === 'string' && trigger.values.every((v) => typeof v === 'string')) stops.push(trigger.values.join(''));
      else if (typeof first !== 'string') endTokens.add(trigger.tokenize(this.model.tokenizer)[0]!);
    }
    const tokens = state.contextText.tokenize(this.model.tokenizer);
    const promptTokens = partial ? this.renderChat({ ...request }).tokens.length : tokens.length;
    const thought = partial ? [] : this.thoughtOpening;
    const opening = [...thought, ...this.shapes.forcedCallOpening(tools, request.toolChoice)];
    const opensThought = thought.length > 0 || promptOpensThought(state.contextText.toString());
    return { tokens: [...tokens, ...opening], promptTokens: promptTokens + thought.length, stops: stops.filter(Boolean), endTokens, opensThought };
  }

  /** A raw prompt (legacy completions): its text as it is, no template, special-token text kept as text. */
  private renderText(text: string): RenderedPrompt {
    const bos = this.model.tokens.bos;
    const tokens = [...(this.model.tokens.shouldPrependBosToken && bos !== null ? [bos] : []), ...this.model.tokenize(text, false)];
    return { tokens, promptTokens: tokens.length, stops: [], endTokens: new Set(), opensThought: false };
  }

  /**
   * Takes all `count` sequences at once, or none: a request holding some while it waits for more
   * could wait forever on another doing the same. A disposed sequence's slot returns to the context
   * a moment after dispose(), so a job that starts right after another ended can find none left.
   */
  private async acquireSequences(count: number): Promise<LlamaContextSequence[]> {
    for (let waited = 0; this.context.sequencesLeft < count; waited += 2) {
      if (waited > 30_000) throw new Error(`${count} context sequence(s) did not become free within 30 s.`);
      await new Promise((r) => setTimeout(r, 2));
    }
    return Array.from({ length: count }, () => this.context.getSequence());
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
