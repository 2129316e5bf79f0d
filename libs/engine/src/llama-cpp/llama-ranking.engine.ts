import type { LlamaModel, LlamaRankingContext } from 'node-llama-cpp';
import { EngineInputError } from '../core/generation-engine.js';
import type { LlamaEmbeddingEngineOptions } from './llama-embedding.engine.js';
import { flashAttention, usableRuntime } from './llama-runtime.js';

export interface RankResult {
  /** One score per document, in document order: the model's probability that it answers the query, 0 to 1. */
  scores: number[];
  /** Tokens evaluated over all (query, document) pairs, the model's special tokens included. */
  promptTokens: number;
}

/**
 * A reranking model in a ranking context (llama.cpp's rank pooling): each document is evaluated with
 * the query before it, and the model's rank head scores the pair. As with embeddings, node-llama-cpp
 * evaluates one pair at a time, so concurrent jobs take turns.
 */
export class LlamaRankingEngine {
  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaRankingContext,
    private readonly contextSize: number,
  ) {}

  static async load(options: LlamaEmbeddingEngineOptions): Promise<LlamaRankingEngine> {
    const llama = await usableRuntime(options.gpu, options.allowCpuFallback);
    const model = await llama.loadModel({
      modelPath: options.modelPath,
      defaultContextFlashAttention: flashAttention(options.flashAttention),
    });
    try {
      const context = await model.createRankingContext({
        contextSize: options.contextSize,
        batchSize: options.contextSize,
        threads: options.threads,
      });
      return new LlamaRankingEngine(model, context, options.contextSize);
    } catch (err) {
      await model.dispose();
      throw new Error(`${options.modelPath} cannot rerank: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Scores every document against the query, in order: one query for them all, or one per document
   * (`query[i]` with `documents[i]`). Every pair is checked to fit before any is evaluated, so a
   * document too long costs no compute. `signal` is checked between documents.
   */
  async rank(
    query: string | readonly string[],
    documents: readonly string[],
    signal?: AbortSignal,
  ): Promise<RankResult> {
    const queryOf = (index: number): string => (typeof query === 'string' ? query : (query[index] ?? ''));
    const queryTokens = new Map<string, number>();
    const tokensOf = (text: string): number => {
      let n = queryTokens.get(text);
      if (n === undefined) queryTokens.set(text, (n = this.model.tokenize(text).length));
      return n;
    };
    const { bos, eos, sep } = this.model.tokens;
    // node-llama-cpp's pair without a template of the model's own: [bos] query eos [sep] document eos.
    const specials = (bos == null ? 0 : 1) + (eos == null ? 0 : 2) + (sep == null ? 0 : 1);
    let promptTokens = 0;
    documents.forEach((document, index) => {
      const length = tokensOf(queryOf(index)) + this.model.tokenize(document).length + specials;
      if (length >= this.contextSize) {
        throw new EngineInputError(
          `documents[${index}] with the query is ${length} tokens, which does not fit this model's context of ${this.contextSize} tokens.`,
          'context_length_exceeded',
        );
      }
      promptTokens += length;
    });
    const scores: number[] = [];
    for (const [index, document] of documents.entries()) {
      signal?.throwIfAborted();
      scores.push(await this.context.rank(queryOf(index), document));
    }
    return { scores, promptTokens };
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
