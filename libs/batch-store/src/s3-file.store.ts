import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  type S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { concatParts } from './concat-parts.js';
import { assertFileId, isFileId } from './file-ids.js';
import { newFileMeta, ownedNewestFirst, parseFileMeta, toStoredFile, type FileMeta } from './file-meta.js';
import {
  assertByteRange,
  assertPartIndex,
  partIndexOf,
  partName,
  slicesOf,
  totalSize,
  type PartEntry,
} from './file-parts.js';
import { FileNotFoundError, FileTooLargeError } from './file-store.errors.js';
import { FileStore, assertMarkName, type ByteRange, type NewFile, type StoredFile } from './file-store.js';
import { SizeLimit } from './size-limit.js';

interface S3Part extends PartEntry {
  key: string;
}

/** Where the store keeps its objects: a bucket, and a prefix in it (`''`: the bucket's root). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/** S3's smallest part of a multipart upload: an upload holds at most UPLOAD_QUEUE of these in memory. */
const UPLOAD_PART_BYTES = 5 * 1024 * 1024;
const UPLOAD_QUEUE = 4;
/** Reads of a store's identity object while another process's first write of it lands. */
const IDENTITY_READS = 50;
/** Requests at once when a listing or a delete touches many objects. */
const FAN_OUT = 16;

/** A missing object. Only GetObject's NoSuchKey says so: a 404 without a code may be a missing bucket. */
const isNoSuchKey = (err: unknown): boolean => err instanceof Error && err.name === 'NoSuchKey';

const statusOf = (err: unknown): number | undefined =>
  (err as Partial<Pick<S3ServiceException, '$metadata'>> | undefined)?.$metadata?.httpStatusCode;

async function mapLimited<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += FAN_OUT)
    results.push(...(await Promise.all(items.slice(i, i + FAN_OUT).map(fn))));
  return results;
}

/**
 * Files in S3-compatible object storage (AWS S3, MinIO, Ceph RGW, Cloudflare R2), shared by every API
 * replica. Under the prefix: `files/<id>/meta.json`, the content as `files/<id>/parts/000000`, … and
 * `identity`. Only PutObject, GetObject (with Range), ListObjectsV2, DeleteObject and multipart uploads
 * are used, which all of them have.
 */
export class S3FileStore extends FileStore {
  private readonly root: string;

  constructor(
    private readonly client: S3Client,
    private readonly location: S3Location,
  ) {
    super();
    this.root = location.prefix ? `${location.prefix}/` : '';
  }

  // Keys are only ever built from validated ids.
  private fileKey(id: string): string {
    return `${this.root}files/${assertFileId(id)}/`;
  }

  private metaKey(id: string): string {
    return `${this.fileKey(id)}meta.json`;
  }

  private partKey(id: string, index: number): string {
    return `${this.fileKey(id)}parts/${partName(index)}`;
  }

  private async getText(key: string): Promise<string> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
    if (!object.Body) throw new Error(`s3://${this.location.bucket}/${key} came back without a body`);
    return object.Body.transformToString();
  }

  private async putText(key: string, text: string, options: { ifNoneMatch?: string } = {}): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.location.bucket,
        Key: key,
        Body: text,
        ContentLength: Buffer.byteLength(text),
        ContentType: 'application/octet-stream',
        IfNoneMatch: options.ifNoneMatch,
      }),
    );
  }

  private async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key }));
  }

  private async readMeta(id: string): Promise<FileMeta> {
    try {
      return parseFileMeta(await this.getText(this.metaKey(id)));
    } catch (err) {
      if (isNoSuchKey(err)) throw new FileNotFoundError(id);
      throw err;
    }
  }

  /** Every object under `prefix`, page by page. */
  private async *objects(prefix: string): AsyncGenerator<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key) yield { key: object.Key, size: object.Size ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async parts(id: string): Promise<S3Part[]> {
    const prefix = `${this.fileKey(id)}parts/`;
    const parts: S3Part[] = [];
    for await (const { key, size } of this.objects(prefix)) {
      const index = partIndexOf(key.slice(prefix.length));
      if (index !== null) parts.push({ index, key, size });
    }
    return parts.sort((a, b) => a.index - b.index);
  }

  async save(file: NewFile, content: AsyncIterable<Buffer | string>, maxBytes: number): Promise<StoredFile> {
    const meta = newFileMeta(file);
    const limit = new SizeLimit(maxBytes);
    const key = this.partKey(meta.id, 0);
    // Streamed: a small file is one PUT, a large one a multipart upload holding a few parts in memory at most.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: key, Body: Readable.from(limit.apply(content)) },
      partSize: UPLOAD_PART_BYTES,
      queueSize: UPLOAD_QUEUE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // The upload is aborted past the limit; a store that refuses the abort still keeps no object.
      if (limit.exceeded) throw new FileTooLargeError(maxBytes);
      throw err;
    }
    try {
      // The metadata comes last: until it is there, the file does not exist for get or list.
      await this.putText(this.metaKey(meta.id), JSON.stringify(meta));
    } catch (err) {
      await this.deleteKey(key).catch(() => undefined);
      throw err;
    }
    return toStoredFile(meta, limit.bytes);
  }

  async create(file: NewFile): Promise<StoredFile> {
    const meta = newFileMeta(file);
    await this.putText(this.metaKey(meta.id), JSON.stringify(meta));
    return toStoredFile(meta, 0);
  }

  async writePart(id: string, index: number, text: string): Promise<void> {
    const key = this.partKey(id, assertPartIndex(index));
    // A deleted file gets no parts: they would be kept, unseen, for ever.
    await this.readMeta(id);
    await this.putText(key, text);
  }

  async get(id: string): Promise<StoredFile> {
    const [meta, parts] = await Promise.all([this.readMeta(id), this.parts(id)]);
    return toStoredFile(meta, totalSize(parts));
  }

  async list(owner: string): Promise<StoredFile[]> {
    // One listing of every file's objects gives the sizes; then each file's metadata is read for its owner.
    const prefix = `${this.root}files/`;
    const sizes = new Map<string, number>();
    const withMeta: string[] = [];
    for await (const { key, size } of this.objects(prefix)) {
      const [id, ...rest] = key.slice(prefix.length).split('/');
      if (!isFileId(id)) continue;
      if (rest.join('/') === 'meta.json') withMeta.push(id);
      else if (rest[0] === 'parts' && partIndexOf(rest[1] ?? '') !== null) sizes.set(id, (sizes.get(id) ?? 0) + size);
    }
    const files = await mapLimited(withMeta, async (id) => {
      try {
        return { meta: await this.readMeta(id), bytes: sizes.get(id) ?? 0 };
      } catch (err) {
        if (err instanceof FileNotFoundError) return null; // deleted while listed
        throw err;
      }
    });
    return ownedNewestFirst(files, owner);
  }

  async read(id: string, range?: ByteRange): Promise<Readable> {
    assertFileId(id);
    assertByteRange(range);
    const [, parts] = await Promise.all([this.readMeta(id), this.parts(id)]);
    return concatParts(slicesOf(parts, range), async ({ part, start, end }) => {
      const whole = start === 0 && end === part.size - 1;
      const object = await this.client.send(
        new GetObjectCommand({
          Bucket: this.location.bucket,
          Key: part.key,
          Range: whole ? undefined : `bytes=${start}-${end}`,
        }),
      );
      if (!(object.Body instanceof Readable)) throw new Error(`s3://${this.location.bucket}/${part.key}: no body`);
      // A store that ignored the range answered with the whole part.
      return { stream: object.Body, skip: whole || object.ContentRange ? 0 : start };
    });
  }

  async delete(id: string): Promise<void> {
    await this.readMeta(id);
    // The metadata goes first, so a file half deleted is already gone for get and list.
    await this.deleteKey(this.metaKey(id));
    await mapLimited(await this.parts(id), (part) => this.deleteKey(part.key));
  }

  async identity(): Promise<string> {
    const key = `${this.root}identity`;
    const read = async (): Promise<string | null> => {
      try {
        return (await this.getText(key)).trim();
      } catch (err) {
        if (isNoSuchKey(err)) return null;
        throw err;
      }
    };
    const found = await read();
    if (found) return found;
    // First use: written only if absent (If-None-Match), so two processes starting at once agree on one.
    try {
      await this.putText(key, randomUUID(), { ifNoneMatch: '*' });
    } catch (err) {
      const status = statusOf(err);
      // 412/409: another process wrote it first, or is writing it. 501: a store without conditional writes.
      if (status === 501) await this.putText(key, randomUUID());
      else if (status !== 412 && status !== 409) throw err;
    }
    // Another process's write may still be landing: it shows within moments.
    for (let attempt = 0; attempt < IDENTITY_READS; attempt++) {
      const identity = await read();
      if (identity) return identity;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`s3://${this.location.bucket}/${key} is still missing after it was written`);
  }

  async mark(name: string): Promise<void> {
    assertMarkName(name);
    await this.putText(`${this.root}marks/${name}`, '1');
  }

  async marked(name: string): Promise<boolean> {
    assertMarkName(name);
    try {
      await this.getText(`${this.root}marks/${name}`);
      return true;
    } catch (err) {
      if (isNoSuchKey(err)) return false;
      throw err;
    }
  }
}
