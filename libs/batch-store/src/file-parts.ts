import type { ByteRange } from './file-store.js';

/** A part of a file's content as a store lists it. */
export interface PartEntry {
  index: number;
  size: number;
}

/** Bytes `start` to `end` (both included) of one part. */
export interface PartSlice<P extends PartEntry> {
  part: P;
  start: number;
  end: number;
}

const PART_NAME = /^\d{6,}$/;

/** Zero-padded, so that a listing sorted by name is in index order. */
export const partName = (index: number): string => String(index).padStart(6, '0');

/** The index a part's name stands for; null for anything else in a part folder (a temporary file). */
export const partIndexOf = (name: string): number | null => (PART_NAME.test(name) ? Number(name) : null);

export function assertPartIndex(index: number): number {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`A part index is an integer from 0 (got ${index}).`);
  }
  return index;
}

export function assertByteRange(range: ByteRange | undefined): void {
  if (!range) return;
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start))) {
    throw new RangeError(`Invalid byte range ${start}-${end ?? ''}.`);
  }
}

export const totalSize = (parts: readonly PartEntry[]): number => parts.reduce((sum, p) => sum + p.size, 0);

/**
 * Which bytes of which parts make up `range` of the content (the whole content without one): parts
 * in index order, empty ones left out, each slice's offsets within its own part.
 */
export function slicesOf<P extends PartEntry>(parts: readonly P[], range?: ByteRange): Array<PartSlice<P>> {
  const first = range?.start ?? 0;
  const last = range?.end ?? Infinity;
  const slices: Array<PartSlice<P>> = [];
  let offset = 0;
  for (const part of [...parts].sort((a, b) => a.index - b.index)) {
    const partEnd = offset + part.size - 1;
    if (part.size > 0 && partEnd >= first && offset <= last) {
      slices.push({ part, start: Math.max(first, offset) - offset, end: Math.min(last, partEnd) - offset });
    }
    offset += part.size;
    if (offset > last) break;
  }
  return slices;
}
