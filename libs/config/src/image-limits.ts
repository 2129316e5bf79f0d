import type { PlatformConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';
import { IMAGE_MAX_BYTES_DEFAULT } from './env/limits.vars.js';

/** Base64 takes 4 characters for every 3 bytes: the most image bytes a body of `bodyBytes` can carry. */
const imageBytesWithin = (bodyBytes: number): number => Math.floor((bodyBytes * 3) / 4);

/**
 * The caps on a request's images. An image arrives as base64 inside the JSON body, so its bytes can be
 * no more than 3/4 of BODY_LIMIT_BYTES: the default (10 MiB, whose base64 is 13.3 MiB) fits the
 * default body of 16 MiB with room for the rest of a conversation, and shrinks with a smaller body
 * limit. An IMAGE_MAX_BYTES set beyond what the body limit lets through is refused, naming both.
 * 7680×4320 (8K UHD, 33.2 Mpx) is the largest frame cameras and screens commonly make, and decodes to
 * 133 MB of RGBA in a worker; a few kilobytes of PNG can claim far more, so the header decides.
 */
export function readImageLimits(r: EnvReader, bodyLimitBytes: number): PlatformConfig['api']['images'] {
  const within = imageBytesWithin(bodyLimitBytes);
  const maxBytes = r.int('IMAGE_MAX_BYTES', Math.min(IMAGE_MAX_BYTES_DEFAULT, within));
  r.check(
    maxBytes <= within,
    `IMAGE_MAX_BYTES (${maxBytes}) cannot arrive within BODY_LIMIT_BYTES (${bodyLimitBytes}): base64 takes 4/3 as much; ` +
      `raise BODY_LIMIT_BYTES above ${Math.ceil((maxBytes * 4) / 3)} (the image's base64 and the rest of the body), or lower IMAGE_MAX_BYTES to ${within}`,
  );
  return {
    maxBytes,
    maxPixels: r.int('IMAGE_MAX_PIXELS'),
    maxCount: r.int('IMAGE_MAX_COUNT'),
  };
}
