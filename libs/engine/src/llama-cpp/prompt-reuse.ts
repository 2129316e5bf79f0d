import type { Token } from 'node-llama-cpp';
import { PREFILL_CHUNK } from './round-loop.js';

// What of a prompt a sequence's cells (or a prefix kept in host memory) may stand in for, told from
// tokens alone: the rule every kind of reuse shares.

/** Length of the common prefix of two token lists. */
export function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const most = Math.min(a.length, b.length);
  let i = 0;
  while (i < most && a[i] === b[i]) i++;
  return i;
}

/**
 * How a sequence's cells are reused. `exact`: only whole prefill chunks that were computed as a prompt.
 * `full`: the longest common prefix of the cells and the prompt, the last reply's tokens and a prompt's
 * last partial chunk included, as llama.cpp's server reuses its slots. Those were computed one at a time,
 * or in a batch of another size than the chunk that computes them without the cache, and on the CPU a
 * batch's size changes a result's last bits: a reply can then differ from the one without the cache
 * where two tokens were all but tied (on the random-weight tiny model, 10 of 24 seeded conversation
 * turns did, and a greedy one did too; none of 24 did on the bench model). `exact` recomputes up to a
 * chunk and the last reply per request, and keeps every reply what it would be without the cache.
 * `off`: nothing is reused.
 */
export type PromptCacheMode = 'exact' | 'full' | 'off';

/**
 * What of a slot's cells a prompt may reuse under `mode`. At least the prompt's last token is always
 * evaluated again: its logits are what the first sample reads.
 */
export function reusable(
  cells: readonly Token[],
  prefilled: number,
  prompt: readonly Token[],
  mode: PromptCacheMode,
): number {
  if (mode === 'off') return 0;
  const common = Math.min(commonPrefix(cells, prompt), prompt.length - 1);
  if (mode === 'full') return common;
  const prefix = Math.min(common, prefilled);
  return prefix - (prefix % PREFILL_CHUNK);
}
