import { imageSize } from 'image-size';

/**
 * The fewest bytes each accepted format needs before its width and height are in the input at all.
 * image-size reads fields without checking the input is long enough for them, so a truncated header
 * would be read from whatever follows it.
 */
const HEADER_BYTES: Readonly<Record<string, number>> = {
  // Signature (8), IHDR length and name (8), width and height (8); an Apple CgBI chunk comes first when present.
  png: 24,
  // Signature (6), logical screen width and height (4).
  gif: 10,
  // RIFF header (12), chunk name and size (8), the frame header that holds the size (10).
  webp: 30,
};
const CGBI_PNG_HEADER_BYTES = 40;

export interface ImageHeader {
  width: number;
  height: number;
  /** image-size's name for the format its bytes show (png, jpg, gif, webp, bmp, ...). */
  type?: string;
}

/**
 * The size and format an image's header states; throws when the bytes are not an image it can read.
 * The header is read from a copy that owns its memory: a small Buffer is a view of Node's shared 8 KB
 * pool, and image-size reads through `DataView(input.buffer, ...)`, which goes past a view's end
 * into the pool, where other requests' bytes lie. In a buffer of its own, a read past the end throws.
 */
export function readImageHeader(data: Buffer): ImageHeader {
  const own = data.byteOffset === 0 && data.buffer.byteLength === data.length ? data : new Uint8Array(data);
  const size = imageSize(own);
  const needed =
    size.type === 'png' && own.length >= 16 && Buffer.from(own.subarray(12, 16)).toString('latin1') === 'CgBI'
      ? CGBI_PNG_HEADER_BYTES
      : (HEADER_BYTES[size.type ?? ''] ?? 0);
  if (own.length < needed) throw new RangeError(`A ${size.type} header needs ${needed} bytes; got ${own.length}.`);
  return { width: size.width, height: size.height, type: size.type };
}
