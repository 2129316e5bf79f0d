import { describe, expect, it } from '@jest/globals';
import { withLock } from 'lifecycle-utils';
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { PREFILL_CHUNK } from './round-loop.js';
import { HostCacheIndex, type HostEntry, type HostMatch } from './host-cache-index.js';
import type { HostPromptCache } from './host-prompt-cache.js';
import type { NativeContext } from './native-context.js';
import { reusable, type PromptCacheMode } from './prompt-reuse.js';
import { SequenceSlots } from './sequence-slots.js';

/** The native calls the slots make, recorded; cells are not modelled, only what was asked. */
class RecordingNative {
  readonly calls: string[] = [];
  removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean {
    this.calls.push(`remove ${sequenceId} ${start}..${end}`);
    return true;
  }
  async copySequenceStateFromOtherSequence(target: number, source: number): Promise<number> {
    this.calls.push(`copy ${source}->${target}`);
    return 0;
  }
}

const tokens = (n: number, offset = 0): Token[] => Array.from({ length: n }, (_, i) => (i + offset) as Token);

function slots(count: number, mode: PromptCacheMode, host?: RecordingHost) {
  const native = host?.native ?? new RecordingNative();
  // Sequences as node-llama-cpp numbers them internally; the slots read only the id.
  const sequences = Array.from({ length: count }, (_, i) => ({ _sequenceId: i }) as unknown as LlamaContextSequence);
  const context = {} as LlamaContext;
  const cache = host as unknown as HostPromptCache | undefined;
  return {
    native,
    context,
    slots: new SequenceSlots(sequences, context, native as unknown as NativeContext, mode, cache),
  };
}

/** A host cache with the real bookkeeping, recording the states it would write and read beside the native calls. */
class RecordingHost {
  readonly native = new RecordingNative();
  readonly index = new HostCacheIndex(1_000_000);
  private nextId = 1;

  worthSaving(cells: readonly Token[], kept: number): boolean {
    return this.index.worthSaving(cells, kept);
  }
  best(prompt: readonly Token[], mode: PromptCacheMode, atLeast: number): HostMatch | null {
    return this.index.best(prompt, mode, atLeast);
  }
  has(entry: HostEntry): boolean {
    return this.index.has(entry);
  }
  async save(sequence: number, cells: readonly Token[], prefilled: number, spare: ReadonlySet<number>): Promise<void> {
    this.native.calls.push(`save ${sequence} ${cells.length}`);
    this.index.add({ id: this.nextId++, tokens: [...cells], prefilled, bytes: cells.length }, spare);
  }
  async restore(match: HostMatch, sequence: number): Promise<boolean> {
    this.native.calls.push(`restore ${match.entry.id}->${sequence} ..${match.upTo}`);
    return true;
  }
}

describe('reusable', () => {
  const cells = tokens(1000);
  it('exact: whole chunks computed as a prompt, never the last prompt token', () => {
    expect(reusable(cells, 1000, tokens(900), 'exact')).toBe(3 * PREFILL_CHUNK);
    expect(reusable(cells, 600, tokens(900), 'exact')).toBe(2 * PREFILL_CHUNK);
    expect(reusable(cells, 1000, tokens(513), 'exact')).toBe(2 * PREFILL_CHUNK);
  });
  it('full: the whole common prefix but the last prompt token', () => {
    expect(reusable(cells, 0, tokens(900), 'full')).toBe(899);
    expect(reusable(cells, 0, [...tokens(700), 5000 as Token], 'full')).toBe(700);
  });
  it('off: nothing', () => {
    expect(reusable(cells, 1000, tokens(900), 'off')).toBe(0);
  });
});

describe('SequenceSlots sharing a beginning being computed', () => {
  it('a second prompt waits for the first to compute the shared part, then copies its cells', async () => {
    const { native, slots: s } = slots(2, 'full');
    const shared = tokens(600);
    const [first] = await s.acquire([[...shared, 7001 as Token]]);
    const [second] = await s.acquire([[...shared, 7002 as Token]]);
    let copied: number | null = null;
    void second!.ready().then((n) => (copied = n));
    expect(await first!.ready()).toBe(0);
    first!.progressed(256);
    await new Promise((r) => setImmediate(r));
    expect(copied).toBeNull();
    first!.progressed(601);
    await new Promise((r) => setImmediate(r));
    expect(copied).toBe(600);
    expect(native.calls).toContain(`copy ${first!.sequenceId}->${second!.sequenceId}`);
    expect(native.calls.at(-1)).toBe(`remove ${second!.sequenceId} 600..-1`);
  });

  it('exact: copies whole chunks only', async () => {
    const { slots: s } = slots(2, 'exact');
    const shared = tokens(600);
    const [first] = await s.acquire([[...shared, 7001 as Token]]);
    const [second] = await s.acquire([[...shared, 7002 as Token]]);
    first!.progressed(601);
    expect(await second!.ready()).toBe(2 * PREFILL_CHUNK);
  });

  it('the choices of one request share: the later ones copy the first one’s prompt', async () => {
    const { native, slots: s } = slots(3, 'full');
    const prompt = tokens(800);
    const leases = await s.acquire([prompt, prompt, prompt]);
    const ready = leases.map((l) => l.ready());
    leases[0]!.progressed(800);
    expect(await Promise.all(ready)).toEqual([0, 799, 799]);
    expect(native.calls.filter((c) => c.startsWith('copy'))).toHaveLength(2);
  });

  it('a prompt whose sharer fails copies nothing, and waits no longer', async () => {
    const { native, slots: s } = slots(2, 'full');
    const shared = tokens(600);
    const [first] = await s.acquire([[...shared, 7001 as Token]]);
    const [second] = await s.acquire([[...shared, 7002 as Token]]);
    const waiting = second!.ready();
    first!.progressed(300);
    first!.release(null);
    expect(await waiting).toBe(0);
    expect(native.calls.some((c) => c.startsWith('copy'))).toBe(false);
  });

  it('shares nothing worth less than a chunk, or with the cache off', async () => {
    const short = slots(2, 'full');
    await short.slots.acquire([[...tokens(100), 1 as Token]]);
    const [lease] = await short.slots.acquire([[...tokens(100), 2 as Token]]);
    expect(await lease!.ready()).toBe(0);
    const off = slots(2, 'off');
    await off.slots.acquire([tokens(900)]);
    const [other] = await off.slots.acquire([tokens(900)]);
    expect(await other!.ready()).toBe(0);
  });
});

describe('SequenceSlots keeping a conversation', () => {
  /** A conversation of `history` tokens kept in a slot, as a finished reply leaves it. */
  async function kept(s: SequenceSlots, history: Token[]) {
    const [lease] = await s.acquire([history]);
    await lease!.ready();
    lease!.release({ tokens: history, prompt: history.length });
    return lease!.sequenceId;
  }

  it('a short request on the same instructions copies their beginning into another slot, leaving the conversation whole', async () => {
    const { native, slots: s } = slots(3, 'full');
    const instructions = tokens(600);
    const conversation = await kept(s, [...instructions, ...tokens(2000, 10_000)]);
    const [side] = await s.acquire([[...instructions, 7001 as Token, 7002 as Token]]);
    expect(side!.sequenceId).not.toBe(conversation);
    expect(await side!.ready()).toBe(600);
    expect(native.calls).toContain(`copy ${conversation}->${side!.sequenceId}`);
    expect(native.calls.some((c) => c.startsWith(`remove ${conversation} `))).toBe(false);
    side!.release({ tokens: [...instructions, 7001 as Token, 7002 as Token, 7003 as Token], prompt: 602 });
    expect(s.cachedTokens()[conversation]).toBe(2600);
  });

  it("a conversation's next turn takes back its own slot and evaluates only its new tokens", async () => {
    const { slots: s } = slots(3, 'full');
    const history = tokens(1500);
    const conversation = await kept(s, history);
    // A side request meanwhile, on other instructions: it takes another slot.
    const [side] = await s.acquire([tokens(40, 50_000)]);
    expect(side!.sequenceId).not.toBe(conversation);
    side!.release({ tokens: tokens(48, 50_000), prompt: 40 });
    const [next] = await s.acquire([[...history, ...tokens(30, 90_000)]]);
    expect(next!.sequenceId).toBe(conversation);
    expect(await next!.ready()).toBe(1500);
  });
});

describe('SequenceSlots with a prompt cache in host memory', () => {
  /** A finished reply's cells: the prompt and `reply` tokens more. */
  async function served(s: SequenceSlots, prompt: Token[], reply = 8) {
    const [lease] = await s.acquire([prompt]);
    const reused = await lease!.ready();
    lease!.release({ tokens: [...prompt, ...tokens(reply, 60_000)], prompt: prompt.length });
    return reused;
  }

  it('cells a new prompt would cut are saved first, and read back for a prompt that begins with them', async () => {
    const host = new RecordingHost();
    const { native, slots: s } = slots(1, 'full', host);
    const a = tokens(600);
    await served(s, [...a, 1 as Token]);
    await served(s, tokens(600, 10_000));
    expect(native.calls.slice(-2)).toEqual(['save 0 609', 'remove 0 0..-1']);
    // A's instructions with another question: B's cells are saved, A's read back, only the rest computed.
    expect(await served(s, [...a, 2 as Token])).toBe(600);
    expect(native.calls.slice(-2)).toEqual(['save 0 608', 'restore 1->0 ..600']);
    expect(s.cachedTokens()).toEqual([609]);
  });

  it('a small cut is not saved, and an entry worth less than a chunk more than the cells is not read back', async () => {
    const host = new RecordingHost();
    const { native, slots: s } = slots(1, 'full', host);
    const a = tokens(600);
    await served(s, [...a, 1 as Token]);
    // Cuts 609 - 400 = 209 tokens: fewer than is worth a state.
    expect(await served(s, [...a.slice(0, 400), 2 as Token])).toBe(400);
    expect(native.calls.some((c) => c.startsWith('save'))).toBe(false);
    await served(s, tokens(600, 10_000));
    // The entry (the cells above, 409 tokens) gives 400, the cells nothing: 400 is a chunk more.
    expect(await served(s, [...a.slice(0, 400), 3 as Token])).toBe(400);
    await served(s, [...a.slice(0, 200), ...tokens(400, 20_000)]);
    expect(native.calls.filter((c) => c.startsWith('restore'))).toHaveLength(1);
  });

  it('an entry evicted between the choice and the lock is not read back: the cells give what they give', async () => {
    const host = new RecordingHost();
    const { native, context, slots: s } = slots(1, 'full', host);
    const a = tokens(600);
    await served(s, [...a, 1 as Token]);
    await served(s, [...a.slice(0, 100), ...tokens(500, 10_000)]);
    let unlock!: () => void;
    const locked = withLock([context, 'context'], () => new Promise<void>((resolve) => (unlock = resolve)));
    const acquiring = s.acquire([[...a, 2 as Token]]);
    host.index.remove(host.index.best([...a, 2 as Token], 'full', 0)!.entry);
    unlock();
    await locked;
    const [lease] = await acquiring;
    expect(await lease!.ready()).toBe(100);
    expect(native.calls.some((c) => c.startsWith('restore'))).toBe(false);
    expect(native.calls.at(-1)).toBe('remove 0 100..-1');
  });
});
