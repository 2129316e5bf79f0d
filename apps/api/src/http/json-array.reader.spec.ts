import { JsonArrayReader, JsonBodyError } from './json-array.reader.js';

const LIMITS = { maxSkeletonBytes: 4096 };

/** The body cut into pieces of `size` bytes, as a socket may deliver it. */
async function* pieces(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function read(text: string, size = 7, key = 'requests') {
  const reader = new JsonArrayReader(key, LIMITS);
  const members: unknown[] = [];
  for await (const m of reader.members(pieces(text, size))) members.push(m);
  return { members, rest: reader.rest() };
}

describe('JsonArrayReader', () => {
  const body = {
    first: 'a "quoted" [bracket], {brace} and a \\ backslash',
    requests: [
      { custom_id: 'a', params: { messages: [{ role: 'user', content: 'x ] } , "' }], n: [1, [2, [3]]] } },
      'text, with a comma',
      12.5e3,
      null,
      [],
      { requests: [9] },
    ],
    'r\u00e9': 'ünïcödé ✓',
    fold_repeats: false,
  };
  const text = JSON.stringify(body, null, 2);

  it('gives every member of the array and the other fields, however the bytes are cut', async () => {
    for (const size of [1, 2, 3, 5, 64, text.length]) {
      const { members, rest } = await read(text, size);
      expect(members).toEqual(body.requests);
      expect(rest.present).toBe(true);
      expect(rest.fields).toEqual({ ...body, requests: body.requests.map(() => 0) });
    }
  });

  it('finds the array under an escaped spelling of its key, and only at the top level', async () => {
    const { members } = await read('{"x":{"requests":[1]},"req\\u0075ests":[2,3]}', 4);
    expect(members).toEqual([2, 3]);
  });

  it('reads a body without the array, and an empty one', async () => {
    expect((await read('{"fold_repeats":true}')).rest).toEqual({ fields: { fold_repeats: true }, present: false });
    expect((await read('  ')).rest).toEqual({ fields: null, present: false });
    expect((await read('[1,2]')).rest).toEqual({ fields: null, present: false });
    expect((await read('{"requests":[]}')).members).toEqual([]);
  });

  it('refuses broken JSON, inside a member or around them', async () => {
    for (const bad of [
      '{"requests":[{"a":}]}',
      '{"requests":[1,,2]}',
      '{"requests":[1,2,]}',
      '{"requests":[1 2]}',
      '{"requests":[1]',
      '{"requests":[1]}}',
      '{"requests":[{"a":1}',
      '{"requests":[1],"requests":[2]}',
      '{"requests":[1] "x":2}',
    ]) {
      await expect(read(bad, 3)).rejects.toBeInstanceOf(JsonBodyError);
    }
  });

  it('refuses other fields larger than the limit', async () => {
    const reader = new JsonArrayReader('requests', { maxSkeletonBytes: 64 });
    const run = async () => {
      for await (const m of reader.members(pieces(JSON.stringify({ requests: [1], note: 'x'.repeat(100) }), 16)))
        void m;
    };
    await expect(run()).rejects.toThrow('more than 64 bytes');
  });

  it('skips a byte-order mark before the body', async () => {
    const { members, rest } = await read('\uFEFF{"requests":[1,2]}', 1);
    expect(members).toEqual([1, 2]);
    expect(rest.present).toBe(true);
  });

  it('refuses __proto__ and constructor.prototype keys, in a member or around them', async () => {
    for (const bad of [
      '{"requests":[{"__proto__":{"x":1}}]}',
      '{"requests":[{"a":{"constructor":{"prototype":{}}}}]}',
      '{"requests":[1],"__proto__":{"x":1}}',
    ]) {
      await expect(read(bad, 5)).rejects.toThrow('__proto__');
    }
  });
});
