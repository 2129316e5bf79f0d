import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { TestS3 } from '../../../test/support/s3-server.js';
import { FileNotFoundError, FileTooLargeError, InvalidFileIdError } from './file-store.errors.js';
import type { FileStore } from './file-store.js';
import { LocalFileStore } from './local-file.store.js';
import { S3FileStore } from './s3-file.store.js';

const MiB = 1024 * 1024;

/** One store under test, and what the cases need to look behind it. */
interface Subject {
  store: FileStore;
  /** Another instance on the same files, as another process would open them. */
  sameStore(): FileStore;
  /** An instance on other files (another folder, another prefix). */
  otherStore(): FileStore;
  /** Everything the store holds for files (its identity aside), as paths or keys. */
  held(): Promise<string[]>;
  /** Requests the store has sent since the last call, where it can tell (S3); null where it cannot. */
  sent(): string[] | null;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

async function digest(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** `total` bytes of repeatable content in 64 KiB chunks, produced as they are read; its sha256 at the end. */
function generated(
  total: number,
  seed = 7,
): { chunks: AsyncIterable<Buffer>; sha256: () => string; whole: () => Buffer } {
  const hash = createHash('sha256');
  const block = (i: number) => Buffer.alloc(Math.min(64 * 1024, total - i * 64 * 1024), `${seed}:${i}|`);
  async function* chunks() {
    for (let i = 0; i * 64 * 1024 < total; i++) {
      const chunk = block(i);
      hash.update(chunk);
      yield chunk;
    }
  }
  return {
    chunks: chunks(),
    sha256: () => hash.digest('hex'),
    whole: () => Buffer.concat(Array.from({ length: Math.ceil(total / (64 * 1024)) }, (_, i) => block(i))),
  };
}

async function* once(value: string): AsyncIterable<string> {
  yield value;
}

const listed = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name !== 'identity')
        .map((e) => relative(dir, join(e.parentPath, e.name)))
    : [];

const scratch = mkdtempSync(join(tmpdir(), 'conveyor-file-store-'));
let s3: TestS3;
const clients: S3Client[] = [];

beforeAll(async () => {
  s3 = await TestS3.start();
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await s3?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function localSubject(): Subject {
  const dir = join(scratch, `local-${randomBytes(4).toString('hex')}`);
  return {
    store: new LocalFileStore(dir),
    sameStore: () => new LocalFileStore(dir),
    otherStore: () => new LocalFileStore(`${dir}-other`),
    held: async () => listed(dir),
    sent: () => null,
  };
}

function s3Subject(): Subject {
  const prefix = `contract/${randomBytes(4).toString('hex')}`;
  const client = s3.client();
  clients.push(client);
  let sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => (args) => {
      sent.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize' },
  );
  const at = (p: string) => new S3FileStore(client, { bucket: TestS3.bucket, prefix: p });
  return {
    store: at(prefix),
    sameStore: () => at(prefix),
    otherStore: () => at(`${prefix}-other`),
    held: async () => {
      const page = await client.send(new ListObjectsV2Command({ Bucket: TestS3.bucket, Prefix: `${prefix}/files/` }));
      sent = [];
      return (page.Contents ?? []).map((o) => o.Key!);
    },
    sent: () => sent.splice(0),
  };
}

describe.each([
  ['LocalFileStore', localSubject],
  ['S3FileStore', s3Subject],
])('FileStore contract: %s', (name, make) => {
  let subject: Subject;
  let store: FileStore;
  const owner = () => `owner-${randomBytes(4).toString('hex')}`;

  beforeAll(() => {
    subject = make();
    store = subject.store;
  });

  it('streams a multi-megabyte upload in and back out unchanged, and ranges of it', async () => {
    const size = 12 * MiB + 12_345;
    const content = generated(size);
    subject.sent();
    const saved = await store.save(
      { filename: 'big.jsonl', purpose: 'batch', owner: 'alice' },
      content.chunks,
      20 * MiB,
    );
    // Past S3's 5 MiB part size the upload goes multipart.
    if (name === 'S3FileStore') expect(subject.sent()).toContain('UploadPartCommand');
    expect(saved).toMatchObject({ filename: 'big.jsonl', purpose: 'batch', owner: 'alice', bytes: size });
    expect(saved.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(await store.get(saved.id)).toEqual(saved);
    expect(await digest(await store.read(saved.id))).toEqual({ sha256: content.sha256(), bytes: size });

    const whole = content.whole();
    const at = 5 * MiB - 10;
    expect(await text(await store.read(saved.id, { start: at, end: at + 19 }))).toBe(
      whole.subarray(at, at + 20).toString(),
    );
    expect(await text(await store.read(saved.id, { start: size - 5 }))).toBe(whole.subarray(size - 5).toString());
  });

  it('refuses an upload past the limit and keeps nothing of it', async () => {
    const who = owner();
    const before = await subject.held();
    await expect(
      store.save({ filename: 'x', purpose: 'batch', owner: who }, generated(7 * MiB).chunks, 6 * MiB),
    ).rejects.toThrow(FileTooLargeError);
    await expect(store.save({ filename: 'y', purpose: 'batch', owner: who }, once('12345678901'), 10)).rejects.toThrow(
      FileTooLargeError,
    );
    expect(await store.list(who)).toEqual([]);
    expect(await subject.held()).toEqual(before);
    // Exactly the limit is allowed.
    const fits = await store.save({ filename: 'z', purpose: 'batch', owner: who }, once('1234567890'), 10);
    expect(fits.bytes).toBe(10);
  });

  it('reads a created file as its parts so far, in index order, while parts are still being added', async () => {
    const file = await store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    expect(file.bytes).toBe(0);
    expect(await text(await store.read(file.id))).toBe('');

    await store.writePart(file.id, 0, 'a\n');
    const early = await store.read(file.id);
    await store.writePart(file.id, 2, 'c\n');
    expect(await text(early)).toBe('a\n');
    expect(await text(await store.read(file.id))).toBe('a\nc\n');

    await store.writePart(file.id, 1, 'b\n');
    // Indexes past six digits still sort as numbers.
    await store.writePart(file.id, 1_700_000_000_000, 'e\n');
    await store.writePart(file.id, 10, 'd\n');
    expect(await text(await store.read(file.id))).toBe('a\nb\nc\nd\ne\n');
    expect((await store.get(file.id)).bytes).toBe(10);
    expect(await text(await subject.sameStore().read(file.id))).toBe('a\nb\nc\nd\ne\n');
  });

  it('replaces a part that is written again, keeping no trace of the first write', async () => {
    const file = await store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    await store.writePart(file.id, 0, 'first\n');
    await store.writePart(file.id, 1, 'second, first try, a long line\n');
    await store.writePart(file.id, 1, 'second\n');
    await store.writePart(file.id, 0, 'first\n');
    expect(await text(await store.read(file.id))).toBe('first\nsecond\n');
    expect((await store.get(file.id)).bytes).toBe(13);
  });

  it('reads byte ranges within one part and across parts', async () => {
    const file = await store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    for (const [index, part] of ['abcdef', 'ghij', '', 'klmnop'].entries()) await store.writePart(file.id, index, part);
    const range = async (start: number, end?: number) => text(await store.read(file.id, { start, end }));
    expect(await range(1, 3)).toBe('bcd');
    expect(await range(0, 0)).toBe('a');
    expect(await range(6, 9)).toBe('ghij');
    expect(await range(4, 11)).toBe('efghijkl');
    expect(await range(12)).toBe('mnop');
    expect(await range(0)).toBe('abcdefghijklmnop');
    expect(await range(15, 100)).toBe('p');
    expect(await range(16)).toBe('');
    await expect(store.read(file.id, { start: -1 })).rejects.toThrow(RangeError);
    await expect(store.read(file.id, { start: 5, end: 4 })).rejects.toThrow(RangeError);
  });

  it("lists an owner's files newest first, with their sizes, and no one else's", async () => {
    const [alice, bob] = [owner(), owner()];
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      ids.push((await store.save({ filename: `f${i}`, purpose: 'batch', owner: alice }, once('x'.repeat(i)), 100)).id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const output = await store.create({ filename: 'out', purpose: 'batch_output', owner: alice });
    await store.writePart(output.id, 0, 'four');
    const bobs = await store.save({ filename: 'b', purpose: 'batch', owner: bob }, once('b'), 100);

    const list = await subject.sameStore().list(alice);
    expect(list.map((f) => f.id)).toEqual([output.id, ...ids.reverse()]);
    expect(list.map((f) => f.bytes)).toEqual([4, 3, 2, 1]);
    expect(list[0]).toMatchObject({ filename: 'out', purpose: 'batch_output', owner: alice });
    expect((await store.list(bob)).map((f) => f.id)).toEqual([bobs.id]);
    expect(await store.list(owner())).toEqual([]);
  });

  it("hides another owner's file exactly like a missing one", async () => {
    const file = await store.save({ filename: 'a', purpose: 'batch', owner: 'alice' }, once('secret'), 100);
    expect(await store.getOwned(file.id, 'alice')).toEqual(file);
    await expect(store.getOwned(file.id, 'bob')).rejects.toThrow(FileNotFoundError);
    await expect(store.getOwned('file-000000000000000000000000', 'alice')).rejects.toThrow(FileNotFoundError);
  });

  it('deletes a file with all its parts; after that it is not found', async () => {
    const file = await store.create({ filename: 'out', purpose: 'batch_output', owner: 'alice' });
    await store.writePart(file.id, 0, 'a');
    await store.writePart(file.id, 1, 'b');
    await store.delete(file.id);
    await expect(store.get(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(store.read(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(store.writePart(file.id, 2, 'c')).rejects.toThrow(FileNotFoundError);
    await expect(store.delete(file.id)).rejects.toThrow(FileNotFoundError);
    expect((await store.list('alice')).map((f) => f.id)).not.toContain(file.id);
    expect((await subject.held()).filter((k) => k.includes(file.id))).toEqual([]);
  });

  it('has one identity for every instance on the same files, and another for other files', async () => {
    const identity = await store.identity();
    expect(identity).toMatch(/^\S{8,}$/);
    expect(await store.identity()).toBe(identity);
    expect(await subject.sameStore().identity()).toBe(identity);
    const [a, b] = [subject.otherStore(), subject.otherStore()];
    // Two processes opening a new store at once agree on its identity.
    const [first, second] = await Promise.all([a.identity(), b.identity()]);
    expect(first).toBe(second);
    expect(first).not.toBe(identity);
  });

  it('refuses ids it could not have issued, and bad part numbers, before any I/O', async () => {
    // A file the store would find if it built a path or key from '../<id>'.
    const decoy = await store.save({ filename: 'd', purpose: 'batch', owner: 'alice' }, once('decoy'), 100);
    subject.sent();
    for (const id of [
      `../${decoy.id}`,
      `${decoy.id}/../${decoy.id}`,
      'file-a/b',
      '',
      'file-AAAAAAAAAAAAAAAAAAAAAAAA/..',
    ]) {
      await expect(store.get(id)).rejects.toThrow(InvalidFileIdError);
      await expect(store.getOwned(id, 'alice')).rejects.toThrow(InvalidFileIdError);
      await expect(store.read(id)).rejects.toThrow(InvalidFileIdError);
      await expect(store.read(id, { start: 0, end: 1 })).rejects.toThrow(InvalidFileIdError);
      await expect(store.writePart(id, 0, 'x')).rejects.toThrow(InvalidFileIdError);
      await expect(store.delete(id)).rejects.toThrow(InvalidFileIdError);
    }
    for (const index of [-1, 1.5, Number.NaN]) {
      await expect(store.writePart(decoy.id, index, 'x')).rejects.toThrow(RangeError);
    }
    expect(subject.sent() ?? []).toEqual([]);
    expect(await text(await store.read(decoy.id))).toBe('decoy');
  });
});

describe('LocalFileStore on disk', () => {
  it('leaves no temporary file behind, and takes nothing but numbered parts for content', async () => {
    const dir = join(scratch, 'temporaries');
    const store = new LocalFileStore(dir);
    const file = await store.create({ filename: 'out', purpose: 'batch_output', owner: 'alice' });
    // Writes of the same parts at once: each part ends as one whole write, never a mix.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.writePart(file.id, i % 4, `${i % 10}\n`.repeat(1000))),
    );
    expect(readdirSync(join(dir, file.id)).sort()).toEqual(['meta.json', 'parts']);
    expect(readdirSync(join(dir, file.id, 'parts')).sort()).toEqual(['000000', '000001', '000002', '000003']);
    const lines = (await text(await store.read(file.id))).split('\n').filter(Boolean);
    for (let part = 0; part < 4; part++) expect(new Set(lines.slice(part * 1000, part * 1000 + 1000)).size).toBe(1);

    writeFileSync(join(dir, file.id, 'parts', 'notes.txt'), 'x');
    expect((await store.get(file.id)).bytes).toBe(8000);
  });
});
