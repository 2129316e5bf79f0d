import { hash } from 'node:crypto';

/** Words a slot holds: a 128-bit digest, then its value plus one (0 marks an empty slot). */
const STRIDE = 5;
const MAX_LOAD = 0.5;

/**
 * A map from text to a line number that keeps 20 bytes a slot instead of the text: what validation
 * remembers of every line it has read (each custom_id, each repeatable body) while it reads a batch of
 * millions of lines. A JavaScript Set of a million short strings takes about 100 MB of heap; this takes
 * 40 MB at the same size, in one typed array the garbage collector never walks.
 *
 * Texts are told apart by 128 bits of their SHA-256: two different texts share a key with a chance of
 * about 10^-25 at ten million lines, far below the chance of a memory error, and nobody can choose
 * texts that collide.
 */
export class DigestTable {
  private slots: Uint32Array;
  private mask: number;
  private count = 0;

  constructor(capacity = 1024) {
    let size = 1024;
    while (size * MAX_LOAD < capacity) size *= 2;
    this.slots = new Uint32Array(size * STRIDE);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Stores `value` (0 to 2^32 − 2) under `text` unless it holds one: returns the value it held before, if any. */
  setIfAbsent(text: string, value: number): number | undefined {
    const key = digest(text);
    const at = this.find(this.slots, this.mask, key);
    const held = this.slots[at + 4];
    if (held !== 0) return held - 1;
    this.slots.set(key, at);
    this.slots[at + 4] = value + 1;
    if (++this.count > (this.mask + 1) * MAX_LOAD) this.grow();
    return undefined;
  }

  /** The slot holding `key`, or the empty slot where it would go (linear probing). */
  private find(slots: Uint32Array, mask: number, key: Uint32Array): number {
    for (let i = key[0] & mask; ; i = (i + 1) & mask) {
      const at = i * STRIDE;
      if (slots[at + 4] === 0) return at;
      if (slots[at] === key[0] && slots[at + 1] === key[1] && slots[at + 2] === key[2] && slots[at + 3] === key[3])
        return at;
    }
  }

  private grow(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Uint32Array(size * STRIDE);
    const mask = size - 1;
    for (let at = 0; at < old.length; at += STRIDE) {
      if (old[at + 4] === 0) continue;
      const to = this.find(slots, mask, old.subarray(at, at + 4));
      slots.set(old.subarray(at, at + STRIDE), to);
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function digest(text: string): Uint32Array {
  const bytes = hash('sha256', text, 'buffer');
  // Read word by word: the digest's Buffer may start at any byte of a shared pool.
  return Uint32Array.of(bytes.readUInt32LE(0), bytes.readUInt32LE(4), bytes.readUInt32LE(8), bytes.readUInt32LE(12));
}
