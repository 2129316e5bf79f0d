import { withLock } from 'lifecycle-utils';
import type { LlamaContext, Token } from 'node-llama-cpp';
import { probabilityMap, type NativeContext, type NativeSampler } from './native-context.js';

/**
 * Prompts are evaluated in chunks that end at multiples of this position. Between two chunks the running
 * replies' next tokens join the batch, so a long prompt never holds them up for more than one chunk (about
 * 130 ms on the bench model, against 1.5 s for a whole 1.5k-token prompt); 256 tokens at a time cost
 * under 1% of prefill throughput against 512 (bench model, 1 thread: 1944 against 1959 tokens/s). Ending
 * chunks at fixed positions also means a token is computed in a batch of the same size whether or not
 * the tokens before it came from the prompt cache: reuse never changes a reply, not even a sampled one.
 */
export const PREFILL_CHUNK = 256;

/** One running reply, as the loop drives it: the tokens it needs evaluated, and what it does with each sample. */
export interface LoopReply {
  readonly sequenceId: number;
  /** What its current step evaluates before it samples: its prompt (or what its prompt cache lacks), then each token. */
  readonly input: readonly Token[];
  /** How many of `input` are in the cells already: a prompt goes in chunk by chunk. */
  readonly fed: number;
  /** Where `input[fed]` goes in the sequence. */
  readonly position: number;
  /** Whether the reply has ended: the loop drops it. */
  readonly ended: boolean;
  /** Whether its sample reports the probabilities of the candidates. */
  readonly probabilities: boolean;
  /** Called before a step's first token is batched: false when the reply ends there instead (its request was aborted). */
  proceed(): boolean;
  /** The next `count` tokens of `input` are in the cells now. */
  decoded(count: number): void;
  /** Its sampler, configured for the token to sample now. */
  sampler(): NativeSampler;
  /**
   * The token sampled from its last input token's logits (null: none could be); sets the next step's input or
   * ends the reply. A promise when the reply must wait for something (a grammar) before its next step.
   */
  accept(token: Token | null, probabilities: Map<Token, number> | undefined): void | Promise<void>;
  /** Its batch failed to decode, or its sample or its own logic failed: it ends with this error. */
  fail(err: unknown): void;
}

/** One reply's tokens in a round's batch. */
interface Share {
  reply: LoopReply;
  count: number;
  /** Where the logits of its last token are in the batch, when that token ends its input (it is sampled); else -1. */
  logits: number;
}

const NO_LOGITS = new Uint32Array(0);
const nextTurn = () => new Promise<void>((resume) => setImmediate(resume));

/**
 * Drives every running reply of one context, a round at a time, as llama.cpp's server does in
 * `update_slots()`: each round gathers every reply's next tokens (a prompt chunk for a reply still in
 * prefill, one token for a decoding one) into one batch, in sequence order, decodes it once, samples each
 * reply whose input ended in the batch and hands it its token. A round holds at most `roundBudget()`
 * tokens; a reply that does not fit waits for the next. The replies' own logic runs synchronously in
 * `accept`, so a token changes hands once per round, not through a promise per layer.
 */
export class RoundLoop {
  /** In sequence order: llama.cpp reuses its compute graph only while a batch keeps its sequences in order. */
  private replies: LoopReply[] = [];
  /** Started since the last round began: they join the next. */
  private readonly joining: LoopReply[] = [];
  private looping = false;

  /** `roundEnded`: runs after each round whose replies were sampled, once each has taken its token. */
  constructor(
    private readonly context: LlamaContext,
    private readonly native: NativeContext,
    private readonly roundEnded: () => void = () => undefined,
  ) {}

  /** Starts a reply: its first tokens go into the next round. */
  add(reply: LoopReply): void {
    this.joining.push(reply);
    if (this.looping) return;
    this.looping = true;
    void this.run();
  }

  /** Replies running or about to. */
  get size(): number {
    return this.replies.length + this.joining.length;
  }

  /**
   * The most tokens one round decodes: the context's batch, two prefill chunks, so a chunk of a new prompt
   * and the running replies' tokens share a round. The one place a round's token budget is set; it may
   * be smaller (while replies stream, say), never larger: the context takes no bigger batch.
   */
  private roundBudget(): number {
    return this.context.batchSize;
  }

  private async run(): Promise<void> {
    try {
      while (this.size) {
        // A turn first: replies started in the same turn share a round.
        await nextTurn();
        // node-llama-cpp's own lock of the context, so freeing or copying a sequence's cells never races a
        // decode. Kept from round to round while a prompt has chunks left (the prompt cache's copies and
        // new requests wait for it), let go when every reply in the last round was sampled.
        await withLock([this.context, 'context'], async () => {
          while (await this.round()) await nextTurn();
        }).catch((err: unknown) => {
          for (const reply of this.replies) reply.fail(err);
          this.replies = [];
        });
      }
    } finally {
      this.looping = false;
    }
  }

  /** One batch, one decode, a sample per reply whose input ended in it. True when a reply has tokens left over. */
  private async round(): Promise<boolean> {
    this.admit();
    const budget = this.roundBudget();
    const { shares, size, leftOut } = this.gather(budget);
    if (!shares.length) return this.drop(leftOut);
    this.native.initBatch(size);
    for (const share of shares) {
      const { reply, count } = share;
      const last = reply.fed + count === reply.input.length;
      const tokens = Uint32Array.from(reply.input.slice(reply.fed, reply.fed + count));
      const [logits] = this.native.addToBatch(
        reply.sequenceId,
        reply.position,
        tokens,
        last ? Uint32Array.of(count - 1) : NO_LOGITS,
      );
      if (last) share.logits = logits!;
    }
    try {
      await this.native.decodeBatch();
    } catch (err) {
      for (const { reply } of shares) reply.fail(err);
      return this.drop(leftOut);
    }
    let unfinished = leftOut;
    for (const share of shares) {
      share.reply.decoded(share.count);
      if (share.logits < 0) unfinished = true;
    }
    await this.sample(shares);
    this.roundEnded();
    return this.drop(unfinished);
  }

  /** Each reply's next tokens in sequence order, as many as the budget and the reply's prefill chunk allow. */
  private gather(budget: number): { shares: Share[]; size: number; leftOut: boolean } {
    let room = budget;
    const shares: Share[] = [];
    for (const reply of this.replies) {
      if (room === 0) return { shares, size: budget, leftOut: true };
      if (reply.fed === 0 && !reply.proceed()) continue;
      const left = reply.input.length - reply.fed;
      // Never an empty share: llama.cpp would be asked for the logits of a token not in the batch.
      if (left <= 0) {
        reply.fail(new Error('Nothing to evaluate.'));
        continue;
      }
      const count = Math.min(room, left, PREFILL_CHUNK - (reply.position % PREFILL_CHUNK));
      shares.push({ reply, count, logits: -1 });
      room -= count;
    }
    return { shares, size: budget - room, leftOut: false };
  }

  /**
   * Samples each reply whose input ended in the batch, all at once, and hands each its token as its sample
   * comes back; settles when every reply is ready for its next step.
   */
  private sample(shares: readonly Share[]): Promise<unknown> {
    const samples: Promise<void>[] = [];
    for (const { reply, logits } of shares) if (logits >= 0) samples.push(this.sampleOne(reply, logits));
    return Promise.all(samples);
  }

  private async sampleOne(reply: LoopReply, logits: number): Promise<void> {
    try {
      const sampled = await this.native.sampleToken(logits, reply.sampler(), reply.probabilities, false);
      const wait = Array.isArray(sampled)
        ? reply.accept(sampled[0] as Token, probabilityMap(sampled[1]))
        : reply.accept(sampled as Token | null, undefined);
      if (wait) await wait;
    } catch (err) {
      reply.fail(err);
    }
  }

  /** Replies that joined meanwhile take their place in sequence order. */
  private admit(): void {
    if (!this.joining.length) return;
    this.replies = [...this.replies, ...this.joining.splice(0)].sort((a, b) => a.sequenceId - b.sequenceId);
  }

  /** Drops the replies that have ended; passes `more` on. */
  private drop(more: boolean): boolean {
    if (this.replies.some((reply) => reply.ended)) this.replies = this.replies.filter((reply) => !reply.ended);
    return more && this.replies.length > 0;
  }
}
