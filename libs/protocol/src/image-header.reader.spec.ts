import { describe, it, expect } from '@jest/globals';
import { readImageHeader } from './image-header.reader.js';
import { parseImageDataUri } from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';

// One small image of each accepted format (and each WebP flavour), with the size its header states.
const IMAGES: ReadonlyArray<[string, Buffer, number, number]> = [
  [
    'PNG',
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    ),
    1,
    1,
  ],
  ['GIF', Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'), 1, 1],
  ['WebP lossless', Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'), 1, 1],
  ['WebP lossy', Buffer.from('UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=', 'base64'), 1, 1],
  [
    'WebP extended',
    Buffer.from(
      'UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==',
      'base64',
    ),
    1,
    1,
  ],
  [
    'JPEG',
    Buffer.from([
      0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xc0, 0x00,
      0x11, 0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9,
    ]),
    3,
    2,
  ],
];

/**
 * `bytes` as a view into a larger buffer whose other bytes are all 0xAB, as a small Buffer is a view
 * into Node's shared pool: a parser that reads past the view's end sees those bytes.
 */
function viewAmidGarbage(bytes: Buffer): Buffer {
  const backing = Buffer.alloc(8192, 0xab);
  bytes.copy(backing, 1000);
  return backing.subarray(1000, 1000 + bytes.length);
}

/** The header's size, or null when it is refused. */
function sizeOf(bytes: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = readImageHeader(bytes);
    return { width, height };
  } catch {
    return null;
  }
}

describe('readImageHeader', () => {
  it.each(IMAGES)('reads the size of a whole %s', (_name, bytes, width, height) => {
    expect(sizeOf(viewAmidGarbage(bytes))).toEqual({ width, height });
  });

  it.each(IMAGES)(
    'never reads past the end of a %s cut at any length: its true size, or a refusal',
    (_name, bytes, width, height) => {
      for (let length = 0; length < bytes.length; length++) {
        const size = sizeOf(viewAmidGarbage(bytes.subarray(0, length)));
        if (size !== null) expect({ length, ...size }).toEqual({ length, width, height });
      }
    },
  );

  it('refuses a PNG cut inside its header, before the height, however the memory after it reads', () => {
    // 20 bytes: signature, IHDR length and name, the width; the height is missing.
    const cut = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAQ=', 'base64');
    for (let i = 0; i < 14; i++) {
      // Small buffers share a pool: fill it with bytes a height could be read from.
      Buffer.from('\xff'.repeat(64), 'latin1');
      let problem: unknown = null;
      try {
        parseImageDataUri(
          `data:image/png;base64,${cut.toString('base64')}`,
          {
            maxBytes: 1 << 20,
            maxPixels: 1 << 30,
            maxCount: 8,
          },
          'image',
        );
      } catch (err) {
        problem = err;
      }
      expect(problem).toBeInstanceOf(RequestProblem);
      expect((problem as RequestProblem).code).toBe('invalid_image');
      expect((problem as RequestProblem).message).not.toMatch(/\d+×\d+/);
    }
  });
});
