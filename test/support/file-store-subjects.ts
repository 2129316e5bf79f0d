/**
 * The file stores the FileStore contract runs against, local and S3 alike, each with what its cases
 * need to look behind it, and the content helpers those cases share.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { FileStore } from '../../libs/batch-store/src/file-store.js';
import { LocalFileStore } from '../../libs/batch-store/src/local-file.store.js';
import { S3FileStore } from '../../libs/batch-store/src/s3-file.store.js';
import { TestS3 } from './s3-server.js';

export const MiB = 1024 * 1024;

/** One store under test, and what the cases need to look behind it. */
export interface Subject {
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

export async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

export async function digest(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** `total` bytes of repeatable content in 64 KiB chunks, produced as they are read; its sha256 at the end. */
export function generated(
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

export async function* once(value: string): AsyncIterable<string> {
  yield value;
}

/** An owner of its own, whose list holds only what the case saves for it. */
export const newOwner = () => `owner-${randomBytes(4).toString('hex')}`;

const listed = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name !== 'identity')
        .map((e) => relative(dir, join(e.parentPath, e.name)))
    : [];

function localSubject(scratch: string): Subject {
  const dir = join(scratch, `local-${randomBytes(4).toString('hex')}`);
  return {
    store: new LocalFileStore(dir),
    sameStore: () => new LocalFileStore(dir),
    otherStore: () => new LocalFileStore(`${dir}-other`),
    held: async () => listed(dir),
    sent: () => null,
  };
}

function s3Subject(s3: TestS3, clients: S3Client[]): Subject {
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

/**
 * The stores of the contract, by name, for describe.each: a local one in a scratch folder and one on
 * an S3-compatible server of the file's own, both started before its cases and removed after them.
 * A subject is made in a beforeAll, once the server is up.
 */
export function fileStoreSubjects(): [name: string, make: () => Subject][] {
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

  return [
    ['LocalFileStore', () => localSubject(scratch)],
    ['S3FileStore', () => s3Subject(s3, clients)],
  ];
}

/** The subject `make` builds, made once before the cases of the block that calls this, once the server is up. */
export function useSubject(make: () => Subject): Subject {
  const subject = {} as Subject;

  beforeAll(() => {
    Object.assign(subject, make());
  });

  return subject;
}
