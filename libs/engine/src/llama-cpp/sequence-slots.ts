import { withLock } from 'lifecycle-utils';
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { PREFILL_CHUNK } from './round-loop.js';
import type { HostMatch } from './host-cache-index.js';
import type { HostPromptCache } from './host-prompt-cache.js';
import type { NativeContext } from './native-context.js';
import { commonPrefix, reusable, type PromptCacheMode } from './prompt-reuse.js';
import type { SlotLease } from './slot-lease.js';
import { sequenceId } from './native-context.js';

/** One sequence of the context, kept for the engine's life, and the tokens its KV cells hold. */
interface Slot {
  readonly id: number;
  busy: boolean;
  /** The tokens at positions 0, 1, … of this sequence's KV cells. */
  cached: Token[];
  /** How many of them were computed as a prompt (in whole chunks), not one at a time as a reply. */
  prefilled: number;
  /** Last taken: the least recently used free slot is the one given up first. */
  lastUsed: number;
  /** While busy: the prompt its generation evaluates, and how many of its tokens are in the cells now. */
  prompt: readonly Token[] | null;
  progress: number;
  /** Counts the times it was taken, so a wait on one generation's progress never mistakes the next one's. */
  taken: number;
}

/** A busy slot whose generation computes a longer beginning of a prompt than the cache holds. */
interface Share {
  from: Slot;
  taken: number;
  upTo: number;
}

/**
 * The context's sequences as a prompt cache. A reply's tokens stay in its sequence when it ends; a new
 * request takes the free sequence whose cells hold the longest reusable prefix of its prompt (the least
 * recently used one when none does), drops the cells past it, and evaluates only the rest. A request
 * whose prompt begins as another's that is being computed right now waits for that beginning and copies
 * its cells (llama.cpp copies a sequence's whole KV buffer), so requests sharing their instructions that
 * arrive together compute them once. Every sequence of the context is allocated at load, so the cache
 * costs no memory beyond the context; with a host cache (HostPromptCache), cells about to be cut are also
 * saved to host memory, and a prompt that begins with a saved prefix has it read back.
 */
export class SequenceSlots {
  private readonly slots: Slot[];
  private readonly waiters: Array<() => void> = [];
  /** Requests waiting for a busy slot's progress. */
  private readonly watchers: Array<() => void> = [];
  private clock = 0;

  constructor(
    sequences: readonly LlamaContextSequence[],
    private readonly context: LlamaContext,
    private readonly native: NativeContext,
    readonly mode: PromptCacheMode,
    /** Where cells cut off a sequence are kept, and put back from; null: they are lost (budget 0, or `off`). */
    private readonly host: HostPromptCache | null = null,
  ) {
    this.slots = sequences.map((sequence) => ({
      id: sequenceId(sequence),
      busy: false,
      cached: [],
      prefilled: 0,
      lastUsed: 0,
      prompt: null,
      progress: 0,
      taken: 0,
    }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** Whether a finished reply's cells are kept for later requests (the prompt cache is on). */
  get reusing(): boolean {
    return this.mode !== 'off';
  }

  /**
   * Takes one slot per prompt, all at once or none: a request holding some while it waits for more could
   * wait forever on another doing the same. Each prompt gets the free slot that reuses most of it.
   */
  async acquire(prompts: readonly (readonly Token[])[]): Promise<SlotLease[]> {
    if (prompts.length > this.slots.length)
      throw new Error(`${prompts.length} sequences asked for; the context has ${this.slots.length}.`);
    while (this.slots.filter((s) => !s.busy).length < prompts.length) {
      await new Promise<void>((resume) => this.waiters.push(resume));
    }
    const chosen = prompts.map((prompt) => {
      const slot = this.target(prompt);
      slot.busy = true;
      slot.lastUsed = ++this.clock;
      slot.taken++;
      let reused = reusable(slot.cached, slot.prefilled, prompt, this.mode);
      let share = this.sharer(prompt, reused, slot);
      // A prefix in host memory is read back when it gives a chunk more than the cells, or another sequence.
      const restore = this.restorable(prompt, Math.max(reused, share?.upTo ?? 0));
      // What the cells give without the restore, should its entry be gone by the time the lock is held.
      const own = reused;
      if (restore) {
        reused = restore.upTo;
        share = null;
      }
      // Set now, so the next choice of the same request can share this one's prompt.
      slot.prompt = prompt;
      slot.progress = reused;
      return { slot, reused, own, share, prompt, restore };
    });
    // Cells past the reused prefix go, under the context's lock: never while a decode runs on the context.
    // Those worth keeping are saved to host memory first; a prefix from there replaces them.
    await withLock([this.context, 'context'], async () => {
      const spare = new Set(chosen.flatMap((c) => (c.restore ? [c.restore.entry.id] : [])));
      for (const choice of chosen) {
        const { slot } = choice;
        let { restore } = choice;
        // Another request's save, under the lock before this one, may have evicted the entry chosen.
        if (restore && !this.host?.has(restore.entry)) {
          restore = null;
          choice.reused = slot.progress = choice.own;
        }
        const kept = restore ? commonPrefix(slot.cached, restore.entry.tokens.slice(0, restore.upTo)) : choice.reused;
        if (this.host?.worthSaving(slot.cached, kept))
          await this.host.save(slot.id, slot.cached, slot.prefilled, spare);
        if (restore && this.host) {
          if (await this.host.restore(restore, slot.id)) {
            slot.cached = restore.entry.tokens.slice(0, restore.upTo);
            slot.prefilled = Math.min(restore.entry.prefilled, restore.upTo);
          } else {
            // The state could not be read back (the sequence was emptied): the whole prompt is computed.
            slot.cached = [];
            slot.prefilled = 0;
            choice.reused = slot.progress = 0;
          }
          continue;
        }
        if (choice.reused < slot.cached.length) this.native.removeTokenCellsFromSequence(slot.id, choice.reused, -1);
        slot.cached = slot.cached.slice(0, choice.reused);
        slot.prefilled = Math.min(slot.prefilled, choice.reused);
      }
    });
    return chosen.map(({ slot, reused, share, prompt }) => {
      const taken = slot.taken;
      return {
        sequenceId: slot.id,
        ready: () => (share ? this.copy(slot, prompt, reused, share) : Promise.resolve(reused)),
        progressed: (position) => {
          if (slot.taken !== taken || position <= slot.progress) return;
          slot.progress = position;
          this.notify();
        },
        rewind: (keep) =>
          withLock([this.context, 'context'], async () => {
            if (slot.taken !== taken) return;
            this.native.removeTokenCellsFromSequence(slot.id, keep, -1);
            slot.progress = Math.min(slot.progress, keep);
          }),
        release: (cells) => this.release(slot, taken, cells),
      };
    });
  }

  /**
   * The host memory entry a prompt restores, if it reuses at least a chunk more than `reused` (what a
   * sequence gives it): less is not worth reading a whole state back.
   */
  private restorable(prompt: readonly Token[], reused: number): HostMatch | null {
    return this.host?.best(prompt, this.mode, reused + PREFILL_CHUNK) ?? null;
  }

  /**
   * The other slot holding, or computing right now, the longest beginning of `prompt`, if that is at least a
   * chunk more than `reused`: worth waiting for and copying rather than computing again. In `exact` mode, in
   * whole chunks. A free slot's cells count too: a request whose prompt begins as a kept conversation but
   * goes on otherwise (a short side request on the same instructions) copies that beginning into a slot of
   * its own instead of cutting the conversation's cells.
   */
  private sharer(prompt: readonly Token[], reused: number, self: Slot): Share | null {
    if (this.mode === 'off') return null;
    let best: Share | null = null;
    for (const from of this.slots) {
      if (from === self) continue;
      let upTo: number;
      if (from.busy) {
        if (!from.prompt) continue;
        upTo = Math.min(commonPrefix(from.prompt, prompt), prompt.length - 1);
        if (this.mode === 'exact') upTo -= upTo % PREFILL_CHUNK;
      } else {
        upTo = reusable(from.cached, from.prefilled, prompt, this.mode);
      }
      if (upTo >= reused + PREFILL_CHUNK && upTo > (best?.upTo ?? 0)) best = { from, taken: from.taken, upTo };
    }
    return best;
  }

  /**
   * Waits until the sharing slot has computed the shared beginning (or stopped computing it), then copies
   * what its cells hold of it into `slot`'s. Returns how much of the prompt `slot` now holds.
   */
  private async copy(slot: Slot, prompt: readonly Token[], reused: number, share: Share): Promise<number> {
    const { from } = share;
    while (from.busy && from.taken === share.taken && from.progress < share.upTo) {
      await new Promise<void>((resume) => this.watchers.push(resume));
    }
    return withLock([this.context, 'context'], async () => {
      // What `from` holds now: its prompt as far as computed while busy, its kept cells once free.
      const computing = from.busy && from.taken === share.taken && from.prompt;
      const cells = computing ? from.prompt!.slice(0, from.progress) : from.busy ? [] : from.cached;
      const prefilled = computing ? from.progress : from.prefilled;
      let take = Math.min(share.upTo, commonPrefix(cells, prompt));
      if (this.mode === 'exact') take = Math.min(take, prefilled) - (Math.min(take, prefilled) % PREFILL_CHUNK);
      if (take <= reused) return reused;
      await this.native.copySequenceStateFromOtherSequence(slot.id, from.id);
      this.native.removeTokenCellsFromSequence(slot.id, take, -1);
      slot.progress = take;
      return take;
    });
  }

  private notify(): void {
    for (const resume of this.watchers.splice(0)) resume();
  }

  /**
   * The free slot a prompt takes: the one where what it reuses of the cells most outweighs what it cuts off
   * them (the tokens past what they share with the prompt); among equals the least recently used. So a
   * conversation's next turn takes back its own cells, and a short request on the same instructions takes
   * an empty or short slot, copying that beginning (sharer), rather than cutting a long conversation's.
   */
  private target(prompt: readonly Token[]): Slot {
    let best: Slot | null = null;
    let bestScore = -Infinity;
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const cut = slot.cached.length - commonPrefix(slot.cached, prompt);
      const score = reusable(slot.cached, slot.prefilled, prompt, this.mode) - cut;
      if (score > bestScore || (score === bestScore && slot.lastUsed < best!.lastUsed)) {
        best = slot;
        bestScore = score;
      }
    }
    return best as Slot;
  }

  private release(slot: Slot, taken: number, cells: { tokens: readonly Token[]; prompt: number } | null): void {
    if (!slot.busy || slot.taken !== taken) return;
    if (cells && this.reusing) {
      slot.cached = [...cells.tokens];
      slot.prefilled = Math.min(cells.prompt, cells.tokens.length);
    } else {
      // Unknown cells (a failed decode) or no cache: empty the sequence, so nothing stale is ever reused.
      slot.cached = [];
      slot.prefilled = 0;
      void withLock([this.context, 'context'], async () => {
        this.native.removeTokenCellsFromSequence(slot.id, 0, -1);
      });
    }
    slot.busy = false;
    slot.prompt = null;
    // Every waiter looks again: one that needs several slots must not keep a freed one from one that needs one.
    for (const resume of this.waiters.splice(0)) resume();
    this.notify();
  }

  /**
   * The KV cells the sequences hold now, running replies' and kept ones', as llama.cpp counts them: read
   * under the context's lock, between two rounds, never while a decode writes them.
   */
  cellsInUse(): Promise<number> {
    return withLock([this.context, 'context'], async () => {
      let cells = 0;
      for (const slot of this.slots) {
        const last = this.native.getSequenceKvCacheMaxPosition(slot.id);
        if (last >= 0) cells += last - Math.max(0, this.native.getSequenceKvCacheMinPosition(slot.id)) + 1;
      }
      return cells;
    });
  }

  /** Tokens every slot's cells hold, for tests and metrics. */
  cachedTokens(): number[] {
    return this.slots.map((s) => s.cached.length);
  }
}
