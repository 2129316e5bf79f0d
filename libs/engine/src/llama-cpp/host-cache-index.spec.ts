import { describe, expect, it } from '@jest/globals';
import type { Token } from 'node-llama-cpp';
import { HostCacheIndex, MIN_SAVED_TOKENS, hostCacheBudget } from './host-cache-index.js';
import { PREFILL_CHUNK } from './round-loop.js';

const tokens = (n: number, offset = 0): Token[] => Array.from({ length: n }, (_, i) => (i + offset) as Token);
const MIB = 2 ** 20;

describe('hostCacheBudget', () => {
  it("unset: llama-server's 8 GiB, but no more than a quarter of the free memory", () => {
    expect(hostCacheBudget(null, 64 * 1024 * MIB)).toBe(8192 * MIB);
    expect(hostCacheBudget(null, 4 * 1024 * MIB)).toBe(1024 * MIB);
  });
  it('set: the MiB asked for, whatever is free; 0 is none', () => {
    expect(hostCacheBudget(16_384, 4 * 1024 * MIB)).toBe(16_384 * MIB);
    expect(hostCacheBudget(0, 64 * 1024 * MIB)).toBe(0);
  });
});

describe('HostCacheIndex', () => {
  it('saves what a request cuts only when the part cut off is worth it, and only once', () => {
    const index = new HostCacheIndex(1000);
    const cells = tokens(600);
    expect(index.worthSaving(cells, 600 - MIN_SAVED_TOKENS + 1)).toBe(false);
    expect(index.worthSaving(cells, 600 - MIN_SAVED_TOKENS)).toBe(true);
    index.add({ id: 1, tokens: tokens(900), prefilled: 900, bytes: 10 });
    // A sequence restored from an entry and cut again holds nothing the entry lacks.
    expect(index.worthSaving(cells, 0)).toBe(false);
    expect(index.worthSaving(tokens(600, 1), 0)).toBe(true);
  });

  it('picks the entry the prompt reuses most of, if it beats what the caller already has', () => {
    const index = new HostCacheIndex(1000);
    index.add({ id: 1, tokens: tokens(400), prefilled: 400, bytes: 10 });
    index.add({ id: 2, tokens: [...tokens(300), ...tokens(500, 9000)], prefilled: 800, bytes: 10 });
    const prompt = [...tokens(300), ...tokens(400, 9000), 1 as Token];
    expect(index.best(prompt, 'full', 0)).toMatchObject({ entry: { id: 2 }, upTo: 700 });
    expect(index.best(prompt, 'full', 701)).toBeNull();
    // exact: whole chunks computed as a prompt.
    expect(index.best(prompt, 'exact', 0)?.upTo).toBe(2 * PREFILL_CHUNK);
    expect(index.best(prompt, 'off', 0)).toBeNull();
    // Never the prompt's last token: its logits are what the first sample reads.
    expect(index.best(tokens(400), 'full', 0)?.upTo).toBe(399);
  });

  it('keeps a prefix once: an entry that begins a new one goes', () => {
    const index = new HostCacheIndex(1000);
    index.add({ id: 1, tokens: tokens(300), prefilled: 300, bytes: 100 });
    index.add({ id: 2, tokens: tokens(300, 1), prefilled: 300, bytes: 100 });
    const added = index.add({ id: 3, tokens: tokens(700), prefilled: 700, bytes: 200 });
    expect(added).toEqual({ kept: true, superseded: [expect.objectContaining({ id: 1 })], evicted: [] });
    expect([index.size, index.bytes]).toEqual([2, 300]);
  });

  it('evicts the least recently used past the budget; a restore counts as a use', () => {
    const index = new HostCacheIndex(300);
    index.add({ id: 1, tokens: tokens(300, 0), prefilled: 300, bytes: 100 });
    index.add({ id: 2, tokens: tokens(300, 1000), prefilled: 300, bytes: 100 });
    index.add({ id: 3, tokens: tokens(300, 2000), prefilled: 300, bytes: 100 });
    index.touch(index.best(tokens(300, 0), 'full', 0)!.entry);
    const added = index.add({ id: 4, tokens: tokens(300, 3000), prefilled: 300, bytes: 150 });
    expect(added.evicted.map((e) => e.id)).toEqual([2, 3]);
    expect(index.bytes).toBe(250);
    expect(index.best(tokens(300, 1000), 'full', 0)).toBeNull();
    expect(index.best(tokens(300, 0), 'full', 0)?.entry.id).toBe(1);
  });

  it('a budget smaller than two entries keeps only the latest; one larger than the budget is not kept', () => {
    const index = new HostCacheIndex(150);
    index.add({ id: 1, tokens: tokens(300, 0), prefilled: 300, bytes: 100 });
    expect(
      index.add({ id: 2, tokens: tokens(300, 1000), prefilled: 300, bytes: 100 }).evicted.map((e) => e.id),
    ).toEqual([1]);
    expect(index.add({ id: 3, tokens: tokens(300, 2000), prefilled: 300, bytes: 151 })).toEqual({
      kept: false,
      superseded: [],
      evicted: [],
    });
    expect([index.size, index.bytes]).toEqual([1, 100]);
  });

  it('never evicts an entry about to be read back: the new one is not kept instead, and nothing goes', () => {
    const index = new HostCacheIndex(150);
    index.add({ id: 1, tokens: tokens(300, 0), prefilled: 300, bytes: 100 });
    const restoring = index.best(tokens(300, 0), 'full', 0)!.entry;
    expect(index.add({ id: 2, tokens: tokens(300, 1000), prefilled: 300, bytes: 100 }, new Set([1]))).toEqual({
      kept: false,
      superseded: [],
      evicted: [],
    });
    expect(index.has(restoring)).toBe(true);
    // Nor superseded: the longer entry is kept beside it, budget allowing.
    const roomy = new HostCacheIndex(1000);
    roomy.add({ id: 1, tokens: tokens(300), prefilled: 300, bytes: 100 });
    expect(roomy.add({ id: 2, tokens: tokens(600), prefilled: 600, bytes: 200 }, new Set([1])).superseded).toEqual([]);
    expect(roomy.size).toBe(2);
  });
});
