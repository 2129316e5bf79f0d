import { describe, expect, it } from '@jest/globals';
import { withLock } from 'lifecycle-utils';
import type { LlamaContext, Token } from 'node-llama-cpp';
import type { NativeContext, NativeSampler } from './native-context.js';
import { PREFILL_CHUNK, RoundLoop, type LoopReply, type RoundLoopOptions } from './round-loop.js';

/** A batch as decoded: each share as `sequence:position+count`, `*` where its last token's logits were asked for. */
type Batch = string[];

/** The native layer, recorded: every decoded batch; sampling returns a made-up token. */
class RecordingNative {
  readonly batches: Batch[] = [];
  /** Decodes that fail, by their number (0 = the first). */
  failing = new Set<number>();
  /** Samples that fail, by sequence. */
  failingSamples = new Set<number>();
  private batch: Batch = [];
  private bySlot: number[] = [];

  initBatch(): void {
    this.batch = [];
    this.bySlot = [];
  }
  addToBatch(sequenceId: number, position: number, tokens: Uint32Array, logits: Uint32Array): Uint32Array {
    this.batch.push(`${sequenceId}:${position}+${tokens.length}${logits.length ? '*' : ''}`);
    this.bySlot.push(sequenceId);
    return logits.length ? Uint32Array.of(this.bySlot.length - 1) : new Uint32Array(0);
  }
  async decodeBatch(): Promise<void> {
    const index = this.batches.push(this.batch) - 1;
    await new Promise((resume) => setTimeout(resume, 1));
    if (this.failing.has(index)) throw new Error(`decode ${index} failed`);
  }
  async sampleToken(logitIndex: number): Promise<number> {
    const sequence = this.bySlot[logitIndex]!;
    if (this.failingSamples.has(sequence)) throw new Error(`sample of ${sequence} failed`);
    return 1000 + sequence;
  }
}

const sampler: NativeSampler = { applyConfig: () => undefined, dispose: () => undefined };

/** A reply that generates `tokens` tokens after its prompt of `prompt` tokens (from `reused`). */
class CountingReply implements LoopReply {
  readonly probabilities = false;
  readonly done: Promise<number>;
  input: readonly Token[];
  fed = 0;
  position: number;
  ended = false;
  generated = 0;
  error: unknown = null;
  /** Makes the reply's step after its first sample wait for this (as a tool call's grammar does). */
  wait: Promise<void> | null = null;
  aborted = false;
  private settle!: (generated: number) => void;

  constructor(
    readonly sequenceId: number,
    prompt: number,
    private readonly tokens: number,
    reused = 0,
  ) {
    this.input = Array.from({ length: prompt - reused }, (_, i) => (reused + i) as Token);
    this.position = reused;
    this.done = new Promise((resolve) => (this.settle = resolve));
  }
  proceed(): boolean {
    if (this.aborted) this.end();
    return !this.aborted;
  }
  decoded(count: number): void {
    this.fed += count;
    this.position += count;
  }
  sampler(): NativeSampler {
    return sampler;
  }
  accept(token: Token | null): void | Promise<void> {
    if (++this.generated >= this.tokens) return this.end();
    const next = () => {
      this.input = [token as Token];
      this.fed = 0;
    };
    if (this.generated === 1 && this.wait) return this.wait.then(next);
    next();
  }
  fail(err: unknown): void {
    this.error = err;
    this.end();
  }
  private end(): void {
    this.ended = true;
    this.settle(this.generated);
  }
}

function loop(options: RoundLoopOptions = { fixedChunks: true }, batchSize = 2 * PREFILL_CHUNK) {
  const native = new RecordingNative();
  const context = { batchSize } as LlamaContext;
  return { native, context, loop: new RoundLoop(context, native as unknown as NativeContext, options) };
}

/** A budget of `streaming` tokens while a reply streams, the whole batch otherwise; what it was told, recorded. */
function fixedBudget(streaming: number) {
  const measured: number[] = [];
  return {
    measured,
    budget: {
      tokens: (streams: boolean) => (streams ? streaming : 2 * PREFILL_CHUNK),
      measured: (tokens: number) => void measured.push(tokens),
    },
  };
}

const size = (batch: Batch) => batch.reduce((sum, share) => sum + Number(share.split('+')[1]!.replace('*', '')), 0);

describe('RoundLoop', () => {
  it("decodes each reply's next tokens in one batch per round, in sequence order, whatever order they joined in", async () => {
    const { native, loop: l } = loop();
    const replies = [3, 0, 2, 1].map((sequence) => new CountingReply(sequence, 4, 3));
    for (const reply of replies) l.add(reply);
    await Promise.all(replies.map((r) => r.done));
    expect(native.batches).toEqual([
      ['0:0+4*', '1:0+4*', '2:0+4*', '3:0+4*'],
      ['0:4+1*', '1:4+1*', '2:4+1*', '3:4+1*'],
      ['0:5+1*', '1:5+1*', '2:5+1*', '3:5+1*'],
    ]);
    await new Promise((resume) => setImmediate(resume));
    expect(l.size).toBe(0);
  });

  it('with fixed chunks, ends prompt chunks at multiples of the chunk, with a decoding reply’s token in every batch', async () => {
    const { native, loop: l } = loop();
    const decoding = new CountingReply(0, 2, 8);
    l.add(decoding);
    await new Promise((resume) => setTimeout(resume, 5));
    // Reuses 100 tokens of its prompt: its first chunk ends at the first multiple of the chunk.
    const prompt = new CountingReply(1, 700, 2, 100);
    l.add(prompt);
    await Promise.all([decoding.done, prompt.done]);
    const chunks = native.batches.flatMap((b) => b.filter((s) => s.startsWith('1:')));
    expect(chunks.slice(0, 3)).toEqual(['1:100+156', '1:256+256', '1:512+188*']);
    for (const batch of native.batches.filter((b) => b.some((s) => s.startsWith('1:')))) {
      if (batch.some((s) => s.startsWith('0:'))) expect(batch[0]).toMatch(/^0:\d+\+1\*$/);
    }
    // From the prompt's first chunk on, the decoding reply is in every batch until it ends.
    const first = native.batches.findIndex((b) => b.some((s) => s.startsWith('1:')));
    const last = native.batches.findLastIndex((b) => b.some((s) => s.startsWith('0:')));
    for (const batch of native.batches.slice(first, last + 1)) expect(batch[0]).toMatch(/^0:/);
  });

  it('with fixed chunks, puts no more than the batch in a round: a reply that does not fit waits for the next', async () => {
    const { native, loop: l } = loop();
    const replies = [new CountingReply(0, 600, 2), new CountingReply(1, 600, 2), new CountingReply(2, 1200, 2)];
    for (const reply of replies) l.add(reply);
    await Promise.all(replies.map((r) => r.done));
    // The prompts with the fewest tokens left go first; the third waits until they are in.
    expect(native.batches[0]).toEqual(['0:0+256', '1:0+256']);
    expect(native.batches[1]).toEqual(['0:256+256', '1:256+256']);
    expect(native.batches[2]).toEqual(['0:512+88*', '1:512+88*', '2:0+256']);
    for (const batch of native.batches) expect(size(batch)).toBeLessThanOrEqual(2 * PREFILL_CHUNK);
  });

  it('a short prompt arriving while a long one goes in joins the next round ahead of it, and samples there', async () => {
    const { budget } = fixedBudget(64);
    const { native, loop: l } = loop({ budget });
    const long = new CountingReply(0, 3000, 2);
    l.add(long);
    await new Promise((resume) => setTimeout(resume, 3));
    const short = new CountingReply(1, 6, 2);
    l.add(short);
    await Promise.all([long.done, short.done]);
    const first = native.batches.findIndex((b) => b.some((share) => share.startsWith('1:')));
    // It came in while the long prompt had most of its tokens left, and was sampled in its first round, a
    // short one: the long prompt's chunk is what its six tokens leave of the streaming budget.
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(5);
    expect(native.batches[first]).toEqual([`0:${512 * first}+58`, '1:0+6*']);
    expect(native.batches[first + 1]).toEqual([`0:${512 * first + 58}+63`, '1:6+1*']);
  });

  it("holds the context's lock for one round at a time, so a prompt-cache copy waits a round at most", async () => {
    const { native, context, loop: l } = loop({ fixedChunks: true });
    const reply = new CountingReply(0, 2000, 20);
    l.add(reply);
    await new Promise((resume) => setImmediate(resume));
    // Waits as a prompt-cache copy does: it gets the lock between two rounds, while the prompt has chunks left.
    const seen = await withLock([context, 'context'], async () => native.batches.length);
    expect(seen).toBeLessThanOrEqual(1);
    const later = await withLock([context, 'context'], async () => native.batches.length);
    expect(later - seen).toBeLessThanOrEqual(1);
    await reply.done;
  });

  it('while replies stream, a prompt goes in in chunks of the round’s budget, after their tokens; alone, a whole batch at a time', async () => {
    const { budget, measured } = fixedBudget(64);
    const { native, loop: l } = loop({ budget });
    // A prompt alone: the whole batch per round.
    const alone = new CountingReply(2, 700, 2);
    l.add(alone);
    await alone.done;
    expect(native.batches.slice(0, 2)).toEqual([['2:0+512'], ['2:512+188*']]);
    // A reply streaming on sequence 1 and a prompt arriving on sequence 0, before it in the batch order.
    const decoding = new CountingReply(1, 2, 12);
    l.add(decoding);
    await new Promise((resume) => setTimeout(resume, 5));
    const prompt = new CountingReply(0, 300, 2, 100);
    l.add(prompt);
    await Promise.all([decoding.done, prompt.done]);
    const rounds = native.batches.filter((b) => b.some((s) => s.startsWith('0:'))).slice(0, 4);
    // Each round: the prompt's chunk is what the streaming reply's token leaves of 64; the last, the rest.
    expect(rounds.map((b) => b.length)).toEqual([2, 2, 2, 2]);
    expect(rounds.map((b) => b[0])).toEqual(['0:100+63', '0:163+63', '0:226+63', '0:289+11*']);
    for (const b of rounds) expect(b[1]).toMatch(/^1:\d+\+1\*$/);
    // Every round's size went to the budget.
    expect(measured.slice(0, 2)).toEqual([512, 188]);
  });

  it('a failed decode fails the replies in its batch only', async () => {
    const { native, loop: l } = loop();
    const a = new CountingReply(0, 600, 4);
    const b = new CountingReply(1, 600, 4);
    const c = new CountingReply(2, 1200, 4);
    native.failing.add(1);
    for (const reply of [a, b, c]) l.add(reply);
    await Promise.all([a, b, c].map((r) => r.done));
    // The second batch held a and b's chunks (c did not fit): they fail, c goes on.
    expect(native.batches[1]).toEqual(['0:256+256', '1:256+256']);
    expect([a, b].map((r) => (r.error as Error | null)?.message)).toEqual(['decode 1 failed', 'decode 1 failed']);
    expect(c.error).toBeNull();
    expect(c.generated).toBe(4);
  });

  it('a failed sample fails its reply only', async () => {
    const { native, loop: l } = loop();
    native.failingSamples.add(3);
    const c = new CountingReply(2, 5, 4);
    const d = new CountingReply(3, 2, 4);
    for (const reply of [c, d]) l.add(reply);
    await Promise.all([c, d].map((r) => r.done));
    expect((d.error as Error | null)?.message).toBe('sample of 3 failed');
    expect(c.error).toBeNull();
    expect(c.generated).toBe(4);
  });

  it('fails a reply with nothing to evaluate instead of batching an empty share', async () => {
    const { native, loop: l } = loop();
    const empty = new CountingReply(0, 0, 2);
    const other = new CountingReply(1, 3, 2);
    l.add(empty);
    l.add(other);
    await Promise.all([empty.done, other.done]);
    expect((empty.error as Error).message).toBe('Nothing to evaluate.');
    expect(native.batches).toEqual([['1:0+3*'], ['1:3+1*']]);
  });

  it('an aborted reply ends before its next step; one that waits holds the next round for every reply', async () => {
    const { native, loop: l } = loop();
    const aborted = new CountingReply(0, 3, 10);
    const waiting = new CountingReply(1, 3, 3);
    let release!: () => void;
    waiting.wait = new Promise((resolve) => (release = resolve));
    l.add(aborted);
    l.add(waiting);
    aborted.aborted = true;
    await aborted.done;
    expect(aborted.generated).toBe(0);
    await new Promise((resume) => setTimeout(resume, 10));
    const before = native.batches.length;
    release();
    await waiting.done;
    expect(before).toBe(1);
    expect(native.batches).toEqual([['1:0+3*'], ['1:3+1*'], ['1:4+1*']]);
  });
});
