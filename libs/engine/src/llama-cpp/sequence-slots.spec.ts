import { describe, expect, it } from '@jest/globals';
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { PREFILL_CHUNK } from './round-loop.js';
import type { NativeContext } from './native-context.js';
import { SequenceSlots, reusable, type PromptCacheMode } from './sequence-slots.js';

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

function slots(count: number, mode: PromptCacheMode) {
  const native = new RecordingNative();
  // Sequences as node-llama-cpp numbers them internally; the slots read only the id.
  const sequences = Array.from({ length: count }, (_, i) => ({ _sequenceId: i }) as unknown as LlamaContextSequence);
  const context = {} as LlamaContext;
  return { native, slots: new SequenceSlots(sequences, context, native as unknown as NativeContext, mode) };
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
