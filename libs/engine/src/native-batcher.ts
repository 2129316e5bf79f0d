import { withLock } from 'lifecycle-utils';
import type { LlamaContext, Token } from 'node-llama-cpp';
import type { NativeContext } from './native-context.js';

/** One sequence's tokens to evaluate, and what to do with the logits of the last one. */
export interface Evaluation<T> {
  sequenceId: number;
  /** Position of the first token in the sequence. */
  position: number;
  tokens: readonly Token[];
  /** Samples from the last token's logits; runs before the next decode, which overwrites them. */
  sample(logitIndex: number): Promise<T>;
}

interface Queued {
  evaluation: Evaluation<unknown>;
  /** Tokens not yet in a batch, and where they start. */
  rest: readonly Token[];
  position: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

const NO_LOGITS = new Uint32Array(0);

/**
 * Decodes the evaluations of every sequence of one context together: all that
 * are queued within one event-loop turn go into one llama.cpp batch (split
 * when they exceed the batch size), in sequence order, and each is sampled
 * right after its batch. It holds node-llama-cpp's own lock of the context
 * while it decodes, so freeing a sequence never races a decode.
 */
export class NativeBatcher {
  private queue: Queued[] = [];
  private scheduled = false;

  constructor(
    private readonly context: LlamaContext,
    private readonly native: NativeContext,
  ) {}

  evaluate<T>(evaluation: Evaluation<T>): Promise<T> {
    if (!evaluation.tokens.length) return Promise.reject(new Error('Nothing to evaluate.'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ evaluation, rest: evaluation.tokens, position: evaluation.position, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After every generation's microtasks of this turn have run, so a round's tokens share a batch.
        setImmediate(() => void this.dispatch());
      }
    });
  }

  private async dispatch(): Promise<void> {
    this.scheduled = false;
    const items = this.queue.sort((a, b) => a.evaluation.sequenceId - b.evaluation.sequenceId);
    this.queue = [];
    if (!items.length) return;
    await withLock([this.context, 'context'], async () => {
      let pending = items;
      while (pending.length) pending = await this.decodeOnce(pending);
    }).catch((err: unknown) => {
      for (const item of items) item.reject(err);
    });
  }

  /** One batch of what fits; returns what is left for the next. */
  private async decodeOnce(items: Queued[]): Promise<Queued[]> {
    let room = this.context.batchSize;
    const batch: { item: Queued; count: number }[] = [];
    for (const item of items) {
      if (room === 0) break;
      const count = Math.min(room, item.rest.length);
      batch.push({ item, count });
      room -= count;
    }
    this.native.initBatch(this.context.batchSize - room);
    const finished: { item: Queued; logitIndex: number }[] = [];
    for (const { item, count } of batch) {
      const last = count === item.rest.length;
      const tokens = Uint32Array.from(item.rest.slice(0, count));
      const [logitIndex] = this.native.addToBatch(item.evaluation.sequenceId, item.position, tokens, last ? Uint32Array.of(count - 1) : NO_LOGITS);
      item.rest = item.rest.slice(count);
      item.position += count;
      if (last) finished.push({ item, logitIndex: logitIndex! });
    }
    try {
      await this.native.decodeBatch();
    } catch (err) {
      for (const { item } of batch) item.reject(err);
      return items.filter((item) => !batch.some((b) => b.item === item));
    }
    await Promise.all(
      finished.map(async ({ item, logitIndex }) => {
        try {
          item.resolve(await item.evaluation.sample(logitIndex));
        } catch (err) {
          item.reject(err);
        }
      }),
    );
    return items.filter((item) => item.rest.length > 0);
  }
}
