import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { base64DecodedBytes, parseImageDataUri } from './image-data-uri.parser.js';
import { deploymentTraits, IMAGE_LIMITS, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

// The smallest images of each accepted type: 1×1 PNG, GIF and WebP, and a JPEG header of 3×2.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xc0, 0x00, 0x11,
  0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9,
]);

/** A PNG header claiming `width`×`height`: what a decompression bomb of a few bytes looks like. */
function pngHeader(width: number, height: number): Buffer {
  const png = Buffer.alloc(33);
  Buffer.from('89504e470d0a1a0a', 'hex').copy(png, 0);
  png.writeUInt32BE(13, 8);
  png.write('IHDR', 12);
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  return png;
}

/** A 4×4 BMP header: an image, of a type that is not accepted. */
function bmpHeader(): Buffer {
  const bmp = Buffer.alloc(54);
  bmp.write('BM', 0);
  bmp.writeUInt32LE(54, 2);
  bmp.writeUInt32LE(40, 14);
  bmp.writeInt32LE(4, 18);
  bmp.writeInt32LE(4, 22);
  return bmp;
}

const uri = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
const PARAM = 'messages[0].content[1].image_url.url';

const refused = (url: string, limits = IMAGE_LIMITS) => requestProblem(() => parseImageDataUri(url, limits, PARAM));

describe('parseImageDataUri', () => {
  it.each([
    ['PNG', PNG, 'image/png', 1, 1],
    ['JPEG', JPEG, 'image/jpeg', 3, 2],
    ['GIF', GIF, 'image/gif', 1, 1],
    ['WebP', WEBP, 'image/webp', 1, 1],
  ])('reads a %s: its type, size and hash', (_name, bytes, mime, width, height) => {
    const image = parseImageDataUri(uri(bytes, mime), IMAGE_LIMITS, PARAM);
    expect(image.ref).toEqual({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      mime,
      bytes: bytes.length,
      width,
      height,
    });
    expect(image.data.equals(bytes)).toBe(true);
  });

  it('takes the type names and the base64 marker in any case, image/jpg for JPEG, and base64 without padding', () => {
    expect(parseImageDataUri(uri(JPEG, 'IMAGE/JPG').replace(';base64', ';BASE64'), IMAGE_LIMITS, PARAM).ref.mime).toBe(
      'image/jpeg',
    );
    const unpadded = uri(PNG).replace(/=+$/, '');
    expect(parseImageDataUri(unpadded, IMAGE_LIMITS, PARAM).data.equals(PNG)).toBe(true);
    expect(
      parseImageDataUri(`data:image/png;name=a.png;base64,${PNG.toString('base64')}`, IMAGE_LIMITS, PARAM).ref.width,
    ).toBe(1);
  });

  it('keeps an image under the type its bytes have when it was sent as another of the four', () => {
    const image = parseImageDataUri(uri(PNG, 'image/jpeg'), IMAGE_LIMITS, PARAM);
    expect(image.ref.mime).toBe('image/png');
  });

  it.each([
    ['not a data: URI', 'https://example.com/cat.png', 'invalid_image_url'],
    ['no comma', 'data:image/png;base64', 'invalid_image_url'],
    ['not base64-encoded', `data:image/png,${PNG.toString('latin1')}`, 'invalid_image_url'],
    ['another encoding', `data:image/png;charset=utf-8,abc`, 'invalid_image_url'],
    ['not base64', 'data:image/png;base64,iVBORw0K!!!!', 'invalid_image_url'],
    ['base64 with a lone last character', 'data:image/png;base64,iVBORw0Ka', 'invalid_image_url'],
    ['padding before the end of a group', 'data:image/png;base64,iVBORw0Ka=', 'invalid_image_url'],
    [
      'whitespace in the base64',
      `data:image/png;base64,${PNG.toString('base64').slice(0, 8)} ${PNG.toString('base64').slice(8)}`,
      'invalid_image_url',
    ],
    ['a type other than the four', uri(PNG, 'image/bmp'), 'invalid_image_format'],
    ['no type', uri(PNG, ''), 'invalid_image_format'],
    ['a BMP sent as PNG', uri(bmpHeader()), 'invalid_image_format'],
    ['text sent as PNG', uri(Buffer.from('just some text, not an image')), 'invalid_image'],
    ['no bytes', 'data:image/png;base64,', 'invalid_image'],
    ['a header with no pixels', uri(pngHeader(0, 10)), 'invalid_image'],
  ])('refuses %s with 400, naming the part', (_name, url, code) => {
    expect(refused(url)).toMatchObject({ status: 400, code, param: PARAM });
  });

  it('refuses an image of more pixels than allowed with 400 image_too_large, from its header alone', () => {
    const bomb = pngHeader(100_000, 100_000);
    expect(refused(uri(bomb))).toMatchObject({ status: 400, code: 'image_too_large', param: PARAM });
    expect(refused(uri(bomb)).message).toContain('100000×100000');
    expect(refused(uri(JPEG, 'image/jpeg'), { ...IMAGE_LIMITS, maxPixels: 5 })).toMatchObject({
      code: 'image_too_large',
    });
    expect(parseImageDataUri(uri(JPEG, 'image/jpeg'), { ...IMAGE_LIMITS, maxPixels: 6 }, PARAM).ref.width).toBe(3);
  });

  it('refuses an image over the byte cap with 413, decided from the length of its base64 before decoding it', () => {
    const limits = { ...IMAGE_LIMITS, maxBytes: 1000 };
    // Not even base64: had it been decoded (or checked) first, this would be a 400.
    const oversized = `data:image/png;base64,${'!'.repeat(1336)}`;
    expect(refused(oversized, limits)).toMatchObject({ status: 413, code: 'image_too_large', param: PARAM });
    expect(refused(oversized, limits).message).toContain('1002 bytes');
    // Exactly at the cap is accepted: 1000 bytes are 1336 characters with padding, 1334 without.
    const atCap = Buffer.concat([PNG, Buffer.alloc(1000 - PNG.length)]);
    expect(parseImageDataUri(uri(atCap), limits, PARAM).ref.bytes).toBe(1000);
    expect(parseImageDataUri(uri(atCap).replace(/=+$/, ''), limits, PARAM).ref.bytes).toBe(1000);
    const over = Buffer.concat([PNG, Buffer.alloc(1001 - PNG.length)]);
    expect(refused(uri(over), limits)).toMatchObject({ status: 413 });
  });
});

describe('base64DecodedBytes', () => {
  it('counts 3 bytes per 4 characters, less the padding, with or without it', () => {
    for (let n = 0; n < 40; n++) {
      const text = Buffer.alloc(n, 7).toString('base64');
      expect(base64DecodedBytes(text)).toBe(n);
      expect(base64DecodedBytes(text.replace(/=+$/, ''))).toBe(n);
    }
  });
});

describe('ChatCompletionRequestDto with images', () => {
  const vision = (traits: Partial<DeploymentTraits> = {}): DeploymentTraits =>
    deploymentTraits({ id: 'seeing', vision: true, ...traits });
  const imagePart = (bytes: Buffer = PNG, type = 'image/png') => ({
    type: 'image_url',
    image_url: { url: uri(bytes, type) },
  });
  const request = (messages: unknown[]) => plainToInstance(ChatCompletionRequestDto, { model: 'seeing', messages });
  const problem = (messages: unknown[], traits: Partial<DeploymentTraits> = {}, limits = IMAGE_LIMITS) =>
    requestProblem(() => checkGeneration(request(messages), vision(traits), limits));

  it('turns a turn with images into its parts in order, each image a reference, and keeps its text joined', () => {
    const dto = request([
      { role: 'system', content: 'Describe.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'First' },
          imagePart(),
          { type: 'text', text: 'then' },
          imagePart(GIF, 'image/gif'),
        ],
      },
    ]);
    const checked = checkGeneration(dto, vision(), IMAGE_LIMITS);
    const job = checked.toJob('req-1');
    const png = checked.images()[0]!.ref;
    const gif = checked.images()[1]!.ref;
    expect(job.messages).toEqual([
      { role: 'system', content: 'Describe.' },
      {
        role: 'user',
        content: 'First\nthen',
        parts: [
          { type: 'text', text: 'First' },
          { type: 'image', image: png },
          { type: 'text', text: 'then' },
          { type: 'image', image: gif },
        ],
      },
    ]);
    // The job refers to the images; their bytes never travel with it.
    expect(JSON.stringify(job)).not.toContain(PNG.toString('base64'));
    expect(png).toMatchObject({ mime: 'image/png', width: 1, height: 1 });
  });

  it('decodes each image once per hash, however many turns carry it', () => {
    const dto = request([
      { role: 'user', content: [imagePart()] },
      { role: 'assistant', content: 'A dot.' },
      { role: 'user', content: [imagePart(), imagePart(WEBP, 'image/webp')] },
    ]);
    expect(
      checkGeneration(dto, vision(), IMAGE_LIMITS)
        .images()
        .map((i) => i.ref.mime),
    ).toEqual(['image/png', 'image/webp']);
  });

  it('refuses an oversized image with 413 whatever the deployment, as the body limit does', () => {
    const big = Buffer.concat([PNG, Buffer.alloc(2000)]);
    // The first image is fine: the size of every image is checked before what the deployment reads.
    const messages = [{ role: 'user', content: [imagePart(), imagePart(big)] }];
    expect(problem(messages, { vision: false }, { ...IMAGE_LIMITS, maxBytes: 1000 })).toMatchObject({
      status: 413,
      code: 'image_too_large',
      param: 'messages[0].content[1].image_url.url',
    });
  });

  it('refuses an image for a deployment without vision with 400, naming the part as OpenAI does', () => {
    const content = [{ type: 'text', text: 'What is it?' }, imagePart()];
    expect(problem([{ role: 'user', content }], { vision: false })).toMatchObject({
      status: 400,
      param: 'messages[0].content[1].type',
      code: 'model_not_supported',
    });
  });

  it('refuses more images than a request may carry, naming the first one over, before decoding any', () => {
    const broken = { type: 'image_url', image_url: { url: 'data:image/png;base64,!!!!' } };
    const messages = [
      { role: 'user', content: [imagePart(), broken] },
      { role: 'user', content: [{ type: 'text', text: 'and' }, imagePart()] },
    ];
    expect(problem(messages, {}, { ...IMAGE_LIMITS, maxCount: 2 })).toMatchObject({
      status: 400,
      param: 'messages[1].content[1]',
      code: 'too_many_images',
    });
    // Within the count, each image is checked: the broken one is named.
    expect(problem(messages)).toMatchObject({
      param: 'messages[0].content[1].image_url.url',
      code: 'invalid_image_url',
    });
  });

  it('refuses an oversized image with 413 and a malformed one with 400, each naming its part', () => {
    const big = Buffer.concat([PNG, Buffer.alloc(2000)]);
    expect(
      problem([{ role: 'user', content: [imagePart(), imagePart(big)] }], {}, { ...IMAGE_LIMITS, maxBytes: 1000 }),
    ).toMatchObject({ status: 413, code: 'image_too_large', param: 'messages[0].content[1].image_url.url' });
    expect(problem([{ role: 'user', content: [imagePart(bmpHeader())] }])).toMatchObject({
      status: 400,
      code: 'invalid_image_format',
      param: 'messages[0].content[0].image_url.url',
    });
  });

  it('refuses a request for another reason before decoding its images', () => {
    const broken = { type: 'image_url', image_url: { url: 'data:image/png;base64,!!!!' } };
    expect(problem([{ role: 'user', content: [broken] }], { task: 'embeddings' })).toMatchObject({
      param: 'model',
      code: 'model_not_supported',
    });
  });

  it('will not make turns of images it has not checked', () => {
    const unchecked = request([{ role: 'user', content: [imagePart()] }]).toRequest(vision());
    expect(() => unchecked.turns(new Map())).toThrow(/checked/);
  });
});
