import type { Token } from 'node-llama-cpp';
import { PREFILL_CHUNK } from './round-loop.js';
import { commonPrefix, reusable, type PromptCacheMode } from './prompt-reuse.js';

/**
 * The fewest tokens worth saving when a request cuts them off a sequence's cells: llama-server saves a
 * slot's prompt to host memory on a like threshold, since a few hundred tokens cost less to compute than
 * a state file costs to write and read back.
 */
export const MIN_SAVED_TOKENS = PREFILL_CHUNK;

/** llama-server's `--cache-ram` default, in MiB. */
export const DEFAULT_RAM_MIB = 8192;

/** The share of the machine's free memory at start that the default budget may take. */
const FREE_MEMORY_SHARE = 0.25;

const MIB = 1024 * 1024;

/**
 * The host cache's budget in bytes: `configured` MiB where set (0 turns the cache off), else llama-server's
 * 8 GiB, but no more than a quarter of the memory free when the engine loads, so a small machine is not
 * pushed into swap by a default nobody chose.
 */
export function hostCacheBudget(configuredMiB: number | null, freeBytes: number): number {
  if (configuredMiB !== null) return configuredMiB * MIB;
  return Math.min(DEFAULT_RAM_MIB * MIB, Math.floor(freeBytes * FREE_MEMORY_SHARE));
}

/** A sequence's cells saved to host memory: the tokens they held, and the state's size. */
export interface HostEntry {
  /** Stable for the entry's life; routing announces the entry's prompt under it. */
  readonly id: number;
  readonly tokens: readonly Token[];
  /** How many of `tokens` were computed as a prompt (what `exact` may reuse of them). */
  readonly prefilled: number;
  readonly bytes: number;
  lastUsed: number;
}

/** The entry a prompt would restore, and how many of its tokens the prompt reuses. */
export interface HostMatch {
  entry: HostEntry;
  upTo: number;
}

/**
 * Which saved prefixes the host cache holds, least recently used first to go once the bytes pass the
 * budget. Pure bookkeeping: the states themselves are written and read by HostPromptCache.
 */
export class HostCacheIndex {
  private readonly entries = new Map<number, HostEntry>();
  private held = 0;
  private clock = 0;

  constructor(readonly budget: number) {}

  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Whether cells holding `cells`, about to lose all past `kept`, should be saved first: the part cut off is
   * worth it, and no entry holds these tokens already (a sequence restored from an entry and cut again).
   */
  worthSaving(cells: readonly Token[], kept: number): boolean {
    if (cells.length - kept < MIN_SAVED_TOKENS) return false;
    for (const entry of this.entries.values())
      if (commonPrefix(entry.tokens, cells) === cells.length) {
        entry.lastUsed = ++this.clock;
        return false;
      }
    return true;
  }

  /**
   * The entry that gives `prompt` the longest reusable beginning, if at least `atLeast` tokens of it: less
   * is not worth a state's read (the caller asks for a chunk beyond what a sequence already gives).
   */
  best(prompt: readonly Token[], mode: PromptCacheMode, atLeast: number): HostMatch | null {
    let best: HostMatch | null = null;
    for (const entry of this.entries.values()) {
      const upTo = reusable(entry.tokens, entry.prefilled, prompt, mode);
      if (upTo >= atLeast && upTo > (best?.upTo ?? 0)) best = { entry, upTo };
    }
    return best;
  }

  /** The entry was restored: it is the most recently used. */
  touch(entry: HostEntry): void {
    entry.lastUsed = ++this.clock;
  }

  /**
   * Adds a saved state. `superseded`: the entries whose tokens begin the new one's (a prefix is kept once,
   * in its longest form); `evicted`: then the least recently used, until the bytes fit the budget. Entries in
   * `spare` (about to be read back) are never taken out: when the new one fits only by taking them, it is
   * not kept (`kept` false) and nothing is taken out, as with one larger than the whole budget.
   */
  add(
    entry: Omit<HostEntry, 'lastUsed'>,
    spare: ReadonlySet<number> = new Set(),
  ): { kept: boolean; superseded: HostEntry[]; evicted: HostEntry[] } {
    const candidates = [...this.entries.values()].filter((other) => !spare.has(other.id));
    const superseded = candidates.filter((other) => commonPrefix(other.tokens, entry.tokens) === other.tokens.length);
    let held = this.held + entry.bytes - superseded.reduce((sum, e) => sum + e.bytes, 0);
    const evictable = candidates.filter((e) => !superseded.includes(e)).sort((a, b) => a.lastUsed - b.lastUsed);
    const evicted: HostEntry[] = [];
    for (const victim of evictable) {
      if (held <= this.budget) break;
      evicted.push(victim);
      held -= victim.bytes;
    }
    if (held > this.budget) return { kept: false, superseded: [], evicted: [] };
    [...superseded, ...evicted].forEach((e) => this.remove(e));
    this.entries.set(entry.id, { ...entry, lastUsed: ++this.clock });
    this.held += entry.bytes;
    return { kept: true, superseded, evicted };
  }

  /** Forgets an entry (its state could not be read back, say); returns it. */
  remove(entry: HostEntry): HostEntry {
    if (this.entries.delete(entry.id)) this.held -= entry.bytes;
    return entry;
  }

  /** Every entry, forgotten: the engine is going. */
  clear(): HostEntry[] {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.held = 0;
    return all;
  }

  /** Whether the entry is still held (another request's save may have evicted it since it was chosen). */
  has(entry: HostEntry): boolean {
    return this.entries.get(entry.id) === entry;
  }
}
