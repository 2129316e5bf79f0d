/** What a Range header asks of a file of a given size (RFC 9110, one range of bytes). */
export type RangeAsked =
  /** No usable Range header: the whole file (a header we cannot serve exactly is ignored, as RFC 9110 allows). */
  | { kind: 'whole' }
  /** Bytes `start` to `end`, both included, within the file. */
  | { kind: 'part'; start: number; end: number }
  /** A valid range that names no byte of the file. */
  | { kind: 'unsatisfiable' };

const ONE_RANGE = /^bytes=(\d*)-(\d*)$/i;

export function parseByteRange(header: string | undefined, size: number): RangeAsked {
  // Several ranges (multipart/byteranges) and malformed headers get the whole file.
  const match = header ? ONE_RANGE.exec(header.trim()) : null;
  if (!match) return { kind: 'whole' };
  const [first, last] = [match[1], match[2]];
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // bytes=-n: the last n bytes.
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
