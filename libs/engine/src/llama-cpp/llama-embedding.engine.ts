import type { LlamaEmbeddingContext, LlamaModel, Token } from 'node-llama-cpp';
import { EngineInputError } from '../core/generation-engine.js';
import { flashAttention, usableRuntime } from './llama-runtime.js';
import { assertPromptCouldFit, longestTokenLength } from './prompt-bound.js';

export interface LlamaEmbeddingEngineOptions {
  modelPath: string;
  contextSize: number;
  threads: number;
  flashAttention?: 'auto' | 'on' | 'off';
  /** Use a GPU; refuse to load when none is usable unless `allowCpuFallback`. */
  gpu: boolean;
  allowCpuFallback?: boolean;
}

export interface EmbedResult {
  /** One unit-length vector per input, in input order. */
  vectors: Float32Array[];
  /** Tokens evaluated over all inputs, the model's begin/end tokens included. */
  promptTokens: number;
}

/**
 * One model in an embedding context. node-llama-cpp evaluates one input at a
 * time on the context's single sequence, so concurrent jobs take turns.
 */
export class LlamaEmbeddingEngine {
  private longestToken: number | undefined;
  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaEmbeddingContext,
    private readonly contextSize: number,
    // Token ids from a request index llama.cpp's tables directly: one out of range aborts the process.
    private readonly vocabularySize: number,
  ) {}

  static async load(options: LlamaEmbeddingEngineOptions): Promise<LlamaEmbeddingEngine> {
    const llama = await usableRuntime(options.gpu, options.allowCpuFallback);
    const model = await llama.loadModel({
      modelPath: options.modelPath,
      defaultContextFlashAttention: flashAttention(options.flashAttention),
    });
    const vocabularySize = (model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[] | undefined)?.length ?? 0;
    if (!vocabularySize) {
      await model.dispose();
      throw new Error(
        `${options.modelPath} declares no vocabulary (tokenizer.ggml.tokens), so token-id inputs cannot be checked.`,
      );
    }
    const context = await model.createEmbeddingContext({
      contextSize: options.contextSize,
      // Bidirectional embedding models (BERT-like) must see a whole input in one micro-batch.
      batchSize: options.contextSize,
      // Explicit: the default (max(4, cores)) was 10-30x slower with the prebuilt CPU binary.
      threads: options.threads,
    });
    return new LlamaEmbeddingEngine(model, context, options.contextSize, vocabularySize);
  }

  /** Width of the vectors this model produces. */
  get dimensions(): number {
    return this.model.embeddingVectorSize;
  }

  /**
   * Embeds every input, in order. All inputs are checked before any is evaluated, so a bad one
   * costs no compute. `signal` is checked between inputs.
   */
  async embed(inputs: ReadonlyArray<string | readonly number[]>, signal?: AbortSignal): Promise<EmbedResult> {
    // Texts that cannot fit are refused before any of them is tokenized.
    const texts = inputs.filter((input): input is string => typeof input === 'string');
    assertPromptCouldFit(
      texts.map((t) => t.length),
      this.contextSize,
      (this.longestToken ??= longestTokenLength(this.model)),
    );
    const tokenized = inputs.map((input, index) => this.tokenize(input, index));
    const vectors: Float32Array[] = [];
    let promptTokens = 0;
    for (const { tokens, length } of tokenized) {
      signal?.throwIfAborted();
      promptTokens += length;
      const { vector } = await this.context.getEmbeddingFor(tokens);
      vectors.push(normalized(vector));
    }
    return { vectors, promptTokens };
  }

  /** The input's tokens, and its length as evaluated (with the begin/end tokens the model adds). */
  private tokenize(input: string | readonly number[], index: number): { tokens: Token[]; length: number } {
    const param = `input[${index}]`;
    if (typeof input !== 'string') {
      const bad = input.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.vocabularySize);
      if (bad >= 0) {
        throw new EngineInputError(
          `${param}[${bad}] is ${input[bad]}, which is not a token id of this model (0 to ${this.vocabularySize - 1}).`,
          'invalid_value',
        );
      }
    }
    const tokens = typeof input === 'string' ? this.model.tokenize(input) : (input.slice() as Token[]);
    if (!tokens.length) throw new EngineInputError(`${param} is empty.`, 'invalid_value');
    const length = this.context.calculateInputLength(tokens);
    // >=: llama.cpp needs one position left over.
    if (length >= this.contextSize) {
      throw new EngineInputError(
        `${param} is ${length} tokens, which does not fit this model's context of ${this.contextSize} tokens.`,
        'context_length_exceeded',
      );
    }
    return { tokens, length };
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}

/** Unit length, as OpenAI's embeddings are, so a dot product is the cosine similarity. */
function normalized(vector: readonly number[]): Float32Array {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = norm > 0 ? vector[i] / norm : 0;
  return out;
}
