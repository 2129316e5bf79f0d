import type { Token } from 'node-llama-cpp';

/** A slot a generation runs on: its sequence id, and how much of its prompt is already in the cells. */
export interface SlotLease {
  readonly sequenceId: number;
  /**
   * Tokens at the start of the prompt whose KV cells are reused: the generation evaluates the rest. When
   * another sequence is computing a longer beginning of the same prompt right now (requests sharing
   * instructions that arrive together, the choices of `n`), this waits for it and copies its cells.
   */
  ready(): Promise<number>;
  /** The generation has this many tokens of its prompt in the cells (for requests waiting to share them). */
  progressed(position: number): void;
  /** Empties the cells past the first `keep` tokens, so that a reply can run again from there. */
  rewind(keep: number): Promise<void>;
  /**
   * Gives the slot back with the tokens now in its cells (what the generation evaluated) and how many of
   * them were its prompt; `null` after a failure, when nobody knows what the cells hold.
   */
  release(cells: { tokens: readonly Token[]; prompt: number } | null): void;
}
