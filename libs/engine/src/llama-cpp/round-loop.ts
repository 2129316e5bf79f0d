import { withLock } from 'lifecycle-utils';
import type { LlamaContext, Token } from 'node-llama-cpp';
import { probabilityMap, type NativeContext, type NativeSampler } from './native-context.js';
import { RoundBudget } from './round-budget.js';

/**
 * With fixed chunks (`PROMPT_CACHE=exact`), prompts are evaluated in chunks that end at multiples of this
 * position, one chunk per reply per round. A token is then computed in a batch of the same size whether
 * or not the tokens before it came from the prompt cache, so reuse never changes a reply, not even a
 * sampled one; the price is that a prompt arriving holds the running streams up for a whole chunk (about
 * 130 ms on the bench model on a fast core, 220 ms on a slow one). Otherwise a chunk is what the round's
 * budget leaves (RoundBudget), wherever it ends: shorter while replies stream, the whole batch when none does.
 */
export const PREFILL_CHUNK = 256;

/** How the loop cuts prompts into chunks. */
export interface RoundLoopOptions {
  /**
   * Chunks end at multiples of PREFILL_CHUNK whatever else runs, so a prompt is computed the same with or
   * without the cache (the `exact` prompt cache needs it). Default false: chunks follow the round's budget.
   */
  fixedChunks?: boolean;
  /** Sets each round's budget (default: a RoundBudget of the context's batch). */
  budget?: Pick<RoundBudget, 'tokens' | 'measured'>;
  /** Runs after each round whose replies were sampled, once each has taken its token. */
  roundEnded?: () => void;
}

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
  /** Replies that have sampled a token: a client waits on each of their next ones. */
  private readonly streaming = new WeakSet<LoopReply>();
  private readonly budget: Pick<RoundBudget, 'tokens' | 'measured'>;
  private readonly fixedChunks: boolean;
  private readonly roundEnded: () => void;

  constructor(
    private readonly context: LlamaContext,
    private readonly native: NativeContext,
    options: RoundLoopOptions = {},
  ) {
    this.fixedChunks = options.fixedChunks ?? false;
    this.budget = options.budget ?? new RoundBudget(context.batchSize);
    this.roundEnded = options.roundEnded ?? (() => undefined);
  }

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
   * The most tokens one round decodes: the context's batch when chunks are fixed; else the RoundBudget's, a
   * short round while a reply streams or a prompt would get its first token in one (a request that arrived
   * behind a long prompt), a longer one otherwise. The one place a round's token budget is set; never larger
   * than the context's batch, which it takes no bigger.
   */
  private roundBudget(): number {
    if (this.fixedChunks) return this.context.batchSize;
    const short = Math.min(this.context.batchSize, this.budget.tokens(true));
    const waited = this.replies.some(
      (reply) => this.streaming.has(reply) || (!reply.ended && reply.input.length - reply.fed <= short),
    );
    return waited ? short : Math.min(this.context.batchSize, this.budget.tokens(false));
  }

  private async run(): Promise<void> {
    try {
      while (this.size) {
        // A turn first: replies started in the same turn share a round.
        await nextTurn();
        // node-llama-cpp's own lock of the context, so freeing or copying a sequence's cells never races a
        // decode. Taken for one round at a time: a request arriving while a long prompt goes in frees or
        // copies its sequence's cells between two rounds and joins the next, rather than waiting for the
        // whole prompt.
        let more = true;
        while (more) {
          more = await withLock([this.context, 'context'], () => this.round()).catch((err: unknown) => {
            for (const reply of this.replies) reply.fail(err);
            this.replies = [];
            return false;
          });
          if (more) await nextTurn();
        }
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
    const started = performance.now();
    try {
      await this.native.decodeBatch();
    } catch (err) {
      for (const { reply } of shares) reply.fail(err);
      return this.drop(leftOut);
    }
    this.budget.measured(size, performance.now() - started);
    let unfinished = leftOut;
    for (const share of shares) {
      share.reply.decoded(share.count);
      if (share.logits < 0) unfinished = true;
    }
    await this.sample(shares);
    this.roundEnded();
    return this.drop(unfinished);
  }

  /**
   * Each reply's next tokens in sequence order, as many as the budget allows. The streaming replies' tokens
   * are counted first, so a prompt's chunk takes what they leave and never their place in the round; then
   * the prompts, the fewest tokens left first, so a short request is never held behind a long prompt.
   */
  private gather(budget: number): { shares: Share[]; size: number; leftOut: boolean } {
    const counts = new Map<LoopReply, number>();
    let room = budget;
    let leftOut = false;
    const prompts = this.replies
      .filter((reply) => !this.streaming.has(reply))
      .sort((a, b) => a.input.length - a.fed - (b.input.length - b.fed));
    for (const group of [this.replies.filter((reply) => this.streaming.has(reply)), prompts]) {
      for (const reply of group) {
        if (room === 0) {
          leftOut = true;
          break;
        }
        if (reply.fed === 0 && !reply.proceed()) continue;
        const left = reply.input.length - reply.fed;
        // Never an empty share: llama.cpp would be asked for the logits of a token not in the batch.
        if (left <= 0) {
          reply.fail(new Error('Nothing to evaluate.'));
          continue;
        }
        const count = this.fixedChunks
          ? Math.min(room, left, PREFILL_CHUNK - (reply.position % PREFILL_CHUNK))
          : Math.min(room, left);
        counts.set(reply, count);
        room -= count;
      }
    }
    const shares: Share[] = [];
    for (const reply of this.replies) {
      const count = counts.get(reply);
      if (count) shares.push({ reply, count, logits: -1 });
    }
    return { shares, size: budget - room, leftOut };
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
      this.streaming.add(reply);
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
