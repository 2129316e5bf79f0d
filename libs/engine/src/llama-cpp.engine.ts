import {
  getLlama,
  type Llama,
  resolveChatWrapper,
  type ChatWrapper,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  TokenBias,
  type Token,
} from 'node-llama-cpp';
import { ChatEngine, EngineInputError, GenerateCallbacks, GenerateRequest, GenerateResult } from './chat-engine.js';
import { toChatHistory, toSamplingOptions } from './llama-options.js';
import { LlamaGeneration } from './llama-generation.js';
import { LockstepScheduler } from './lockstep-scheduler.js';

export interface LlamaCppEngineOptions {
  modelPath: string;
  contextSize: number;
  parallel: number;
  threads: number;
  /** Use a GPU; refuse to load when none is usable unless `allowCpuFallback`. */
  gpu: boolean;
  allowCpuFallback?: boolean;
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

/**
 * A bias that never samples an end-of-generation token of this model (EOS, EOT, <|im_end|>, …), for
 * ignore_eos. TokenBias.set() deliberately skips such tokens, so they go into its bias map directly;
 * node-llama-cpp is pinned, and a change of that map's shape stops the worker at load, not silently.
 */
function endTokensBias(model: LlamaModel): TokenBias {
  const bias = new TokenBias(model.tokenizer);
  const biases = (bias as unknown as { _biases?: unknown })._biases;
  if (!(biases instanceof Map)) throw new Error('ignore_eos: this node-llama-cpp version keeps token biases differently');
  const vocabulary = (model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[] | undefined)?.length ?? 0;
  for (let token = 0; token < vocabulary; token++) {
    if (model.isEogToken(token as Token)) biases.set(token, -Infinity);
  }
  return bias;
}

/** One llama.cpp runtime per process and backend choice, shared by every model the worker loads. */
function runtime(gpu: boolean): Promise<Llama> {
  let llama = runtimes.get(gpu);
  if (!llama) {
    // build: 'never' — a failed binary check must not silently compile llama.cpp for minutes.
    llama = getLlama({ build: 'never', gpu: gpu ? 'auto' : false });
    runtimes.set(gpu, llama);
  }
  return llama;
}

/**
 * One model, one context with `parallel` sequences; each request borrows a
 * sequence and generates over the full message list rendered by the model's
 * template. A scheduler steps all running replies together, so every decode
 * carries one token of each, as llama.cpp's own server batches them.
 */
export class LlamaCppEngine implements ChatEngine {
  private readonly scheduler = new LockstepScheduler();

  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    // Resolved once: auto-detecting per request costs hundreds of milliseconds.
    private readonly chatWrapper: ChatWrapper,
    // Built once: forbids every end-of-generation token, for requests that set ignore_eos.
    private readonly noEnd: TokenBias,
  ) {}

  static async load(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    let llama = await runtime(options.gpu);
    if (options.gpu && llama.gpu === false) {
      if (!options.allowCpuFallback) throw new GpuUnavailableError();
      llama = await runtime(false);
    }
    const model = await llama.loadModel({ modelPath: options.modelPath });
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
    return new LlamaCppEngine(model, context, chatWrapper, endTokensBias(model));
  }

  countPromptTokens(request: Pick<GenerateRequest, 'messages'>): number {
    return this.renderPrompt(request.messages).prompt.length;
  }

  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const partial = request.continueFrom ?? '';
    const { prompt, stops, endTokens } = this.renderPrompt(request.messages, partial);
    const promptTokens = partial ? this.countPromptTokens(request) : prompt.length;
    const contextSize = this.context.contextSize;
    if (prompt.length >= contextSize) {
      throw new EngineInputError(
        `The prompt is ${promptTokens} tokens, which does not fit this model's context of ${contextSize} tokens.`,
        'context_length_exceeded',
      );
    }
    // A resumed reply counts the tokens already sent against max_tokens and in usage.
    const sentTokens = partial ? this.model.tokenize(partial).length : 0;
    // Never past the context: a reply that fills it ends with "length" instead of shifting context forever.
    const budget = Math.min((request.maxTokens ?? Infinity) - sentTokens, contextSize - prompt.length);
    callbacks.onStart(promptTokens);
    if (budget <= 0) return { finishReason: 'length', usage: { promptTokens, completionTokens: sentTokens }, aborted: false };

    const sequence = await this.acquireSequence();
    try {
      const generation = new LlamaGeneration(this.model, sequence, {
        prompt,
        budget,
        stops: [...request.stop, ...stops],
        endTokens: request.sampling.ignoreEos ? new Set() : endTokens,
        evaluate: (recent) => ({ ...toSamplingOptions(request.sampling, recent), tokenBias: request.sampling.ignoreEos ? this.noEnd : undefined }),
        signal: request.signal,
        onText: (text) => callbacks.onText(text),
      });
      this.scheduler.start(generation);
      const outcome = await generation.outcome;
      return {
        finishReason: outcome.finishReason,
        usage: { promptTokens, completionTokens: sentTokens + outcome.generatedTokens },
        aborted: outcome.aborted,
      };
    } finally {
      sequence.dispose();
    }
  }

  /**
   * The prompt in the model's own template, tokenized once, with what ends a turn in that template:
   * triggers that start with a special token end at that token, textual ones become stop strings.
   */
  private renderPrompt(messages: GenerateRequest['messages'], partial = ''): { prompt: Token[]; stops: string[]; endTokens: Set<Token> } {
    const state = this.chatWrapper.generateContextState({ chatHistory: toChatHistory(messages, partial) });
    const stops: string[] = [];
    const endTokens = new Set<Token>();
    for (const trigger of state.stopGenerationTriggers) {
      const first = trigger.values[0];
      if (first === undefined) continue;
      if (typeof first === 'string' && trigger.values.every((v) => typeof v === 'string')) stops.push(trigger.values.join(''));
      else if (typeof first !== 'string') endTokens.add(trigger.tokenize(this.model.tokenizer)[0]!);
    }
    return { prompt: state.contextText.tokenize(this.model.tokenizer), stops: stops.filter(Boolean), endTokens };
  }

  /**
   * A disposed sequence's slot returns to the context a moment after dispose(),
   * so a job that starts right after another ended can find none left: wait for it.
   */
  private async acquireSequence(): Promise<LlamaContextSequence> {
    for (let waited = 0; this.context.sequencesLeft === 0; waited += 2) {
      if (waited > 30_000) throw new Error('No context sequence became free within 30 s.');
      await new Promise((r) => setTimeout(r, 2));
    }
    return this.context.getSequence();
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
