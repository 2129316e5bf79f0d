import { createHash } from 'node:crypto';
import { ErrorCode } from '@conveyor/openai';
import type { ImageMime, ImageRef } from '@conveyor/queue';
import { readImageHeader, type ImageHeader } from './image-header.reader.js';
import { RequestProblem } from './request-problem.js';

/** What one request's images are held to (the platform's IMAGE_MAX_* settings). */
export interface ImageLimits {
  /** Bytes of one image, decoded. */
  maxBytes: number;
  /** Pixels (width × height) of one image. */
  maxPixels: number;
  /** Images in one request. */
  maxCount: number;
}

/** An image of a request, decoded: its bytes, and the reference a job carries instead of them. */
export interface DecodedImage {
  ref: ImageRef;
  data: Buffer;
}

/** The types a data: URI may declare; `image/jpg` is not registered, but clients send it for JPEG. */
const DECLARED: Readonly<Record<string, ImageMime>> = {
  'image/png': 'image/png',
  'image/jpeg': 'image/jpeg',
  'image/jpg': 'image/jpeg',
  'image/webp': 'image/webp',
  'image/gif': 'image/gif',
};

/** image-size's name of each type its header parsers recognise, for the four that are accepted. */
const SNIFFED: Readonly<Record<string, ImageMime>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

const FORMATS = 'PNG, JPEG, WebP or GIF';
/** The media type and its parameters come before the first comma; anything longer is not a header. */
const MAX_HEADER = 256;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

const paddingOf = (text: string): number => (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);

/** Bytes a base64 text decodes to, from its length alone: 3 per 4 characters, less the padding. */
export function base64DecodedBytes(text: string): number {
  return Math.floor(((text.length - paddingOf(text)) * 3) / 4);
}

/**
 * Standard base64 (RFC 4648), padded or not. Node's decoder skips what it cannot read, so a text is
 * checked first: a group is never a lone character, and padding only ever completes the last group.
 */
function isBase64(text: string): boolean {
  if (!BASE64.test(text)) return false;
  return paddingOf(text) ? text.length % 4 === 0 : text.length % 4 !== 1;
}

/** Refuses base64 text that decodes to more than an image may have, with 413: decided from its length alone. */
function checkBytes(text: string, limits: ImageLimits, param: string): void {
  const bytes = base64DecodedBytes(text);
  if (bytes <= limits.maxBytes) return;
  throw new RequestProblem(
    `The image is ${mib(bytes)} (${bytes} bytes); an image may be at most ${mib(limits.maxBytes)} (${limits.maxBytes} bytes).`,
    param,
    ErrorCode.imageTooLarge,
    413,
  );
}

/**
 * The size check of `parseImageDataUri` alone, costing no decoding: a payload limit, like the body's,
 * which holds whatever deployment the request names. A URI of another form is left to the full parse.
 */
export function checkImageDataUriBytes(url: string, limits: ImageLimits, param: string): void {
  const comma = url.slice(0, MAX_HEADER).indexOf(',');
  if (comma >= 0) checkBytes(url.slice(comma + 1), limits, param);
}

/**
 * Refuses an image given by URL (never fetched: a URL would let any caller make this server reach into
 * its network), then checks a data: URI's size as `checkImageDataUriBytes` does.
 */
export function checkInlineImage(url: string, limits: ImageLimits, param: string): void {
  if (url.slice(0, 5).toLowerCase() !== 'data:') {
    throw new RequestProblem(
      'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
      param,
      ErrorCode.invalidImageUrl,
    );
  }
  checkImageDataUriBytes(url, limits, param);
}

/** Refuses more images than a request may carry, naming the first one past the limit. */
export function checkImageCount(
  images: readonly { at: string }[],
  limits: ImageLimits,
  carrier: 'request' | 'conversation',
): void {
  if (images.length <= limits.maxCount) return;
  throw new RequestProblem(
    `The ${carrier} carries ${images.length} images; a request may carry at most ${limits.maxCount}.`,
    images[limits.maxCount]!.at,
    ErrorCode.tooManyImages,
  );
}

/**
 * Reads an image from a `data:` URI (`data:image/png;base64,...`) and checks it against `limits`, or
 * throws a RequestProblem naming `param`. Its size is decided from the base64 text's length before
 * anything is decoded, so an oversized image costs no allocation; then its header is read, and the
 * type it declares must be one of the four accepted. The bytes are what counts: an image whose header
 * says it is another of the four (a PNG sent as image/jpeg) is kept under its real type, since
 * decoders go by the bytes too; one that is none of the four is refused.
 */
export function parseImageDataUri(url: string, limits: ImageLimits, param: string): DecodedImage {
  const comma = url.slice(0, MAX_HEADER).indexOf(',');
  if (url.slice(0, 5).toLowerCase() !== 'data:' || comma < 0) {
    throw new RequestProblem(
      'An image must be a data: URI with its type and base64 bytes (data:image/png;base64,...).',
      param,
      ErrorCode.invalidImageUrl,
    );
  }
  const [type = '', ...parameters] = url.slice(5, comma).split(';');
  const declared = DECLARED[type.trim().toLowerCase()];
  if (!declared) {
    throw new RequestProblem(
      `The image is declared as '${type.slice(0, 64)}'; images must be ${FORMATS} (image/png, image/jpeg, image/webp, image/gif).`,
      param,
      ErrorCode.invalidImageFormat,
    );
  }
  if (parameters.at(-1)?.trim().toLowerCase() !== 'base64') {
    throw new RequestProblem(
      'The image must be base64-encoded (data:image/png;base64,...); other encodings are not accepted.',
      param,
      ErrorCode.invalidImageUrl,
    );
  }
  const text = url.slice(comma + 1);
  checkBytes(text, limits, param);
  if (!isBase64(text)) throw new RequestProblem('The image is not valid base64.', param, ErrorCode.invalidImageUrl);
  const data = Buffer.from(text, 'base64');
  let size: ImageHeader;
  try {
    size = readImageHeader(data);
  } catch {
    throw new RequestProblem(`The image could not be read as ${FORMATS}.`, param, ErrorCode.invalidImage);
  }
  const mime = size.type ? SNIFFED[size.type] : undefined;
  if (!mime) {
    throw new RequestProblem(
      `The image is ${size.type ? `a ${size.type.toUpperCase()} image` : 'of an unknown type'}; images must be ${FORMATS}.`,
      param,
      ErrorCode.invalidImageFormat,
    );
  }
  const { width, height } = size;
  if (!(width > 0 && height > 0)) {
    throw new RequestProblem(`The image has no pixels (${width}×${height}).`, param, ErrorCode.invalidImage);
  }
  if (width * height > limits.maxPixels) {
    throw new RequestProblem(
      `The image is ${width}×${height} (${width * height} pixels); an image may have at most ${limits.maxPixels} pixels.`,
      param,
      ErrorCode.imageTooLarge,
    );
  }
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { ref: { sha256, mime, bytes: data.length, width, height }, data };
}
