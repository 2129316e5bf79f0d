import { Readable } from 'node:stream';
import type { PartEntry, PartSlice } from './file-parts.js';

/** An opened slice: its bytes from `skip` on are the slice (a store that ignored a range sends the whole part). */
export interface OpenedSlice {
  stream: Readable;
  skip: number;
}

/**
 * One stream of the slices' bytes, in order. Each part is opened only when the reader gets to it,
 * so a reader that stops early (or a 200 MB file) holds one part's stream at a time; and exactly
 * each slice's length is passed on, whatever the part holds by the time it is read.
 */
export function concatParts<P extends PartEntry>(
  slices: Array<PartSlice<P>>,
  open: (slice: PartSlice<P>) => Promise<OpenedSlice>,
): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    for (const slice of slices) {
      const { stream, skip } = await open(slice);
      let toSkip = skip;
      let left = slice.end - slice.start + 1;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          let piece = chunk;
          if (toSkip > 0) {
            const skipped = Math.min(toSkip, piece.length);
            toSkip -= skipped;
            piece = piece.subarray(skipped);
          }
          if (piece.length > left) piece = piece.subarray(0, left);
          left -= piece.length;
          if (piece.length) yield piece;
          if (left === 0) break;
        }
      } finally {
        stream.destroy();
      }
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
