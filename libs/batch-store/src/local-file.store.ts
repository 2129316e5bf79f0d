import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, readFile, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
import { FileNotFoundError } from './file-store.errors.js';
import { FileStore, assertMarkName, type ByteRange, type NewFile, type StoredFile } from './file-store.js';
import { SizeLimit } from './size-limit.js';

interface LocalPart extends PartEntry {
  path: string;
}

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Writes `data` to `path` and flushes it to the disk before returning. */
async function writeSynced(path: string, data: string, flag = 'w'): Promise<void> {
  const handle = await open(path, flag);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a folder, so that a rename into it survives a crash. */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Files on local disk, one folder per file: `<dir>/<id>/meta.json` and the content as numbered parts
 * in `<dir>/<id>/parts/`. Writes land in a temporary file beside them and are renamed into place, so a
 * reader never sees half of one. `<dir>/identity` names the store.
 */
export class LocalFileStore extends FileStore {
  constructor(private readonly dir: string) {
    super();
  }

  // Paths are only ever built from validated ids.
  private fileDir(id: string): string {
    return join(this.dir, assertFileId(id));
  }

  private metaPath(id: string): string {
    return join(this.fileDir(id), 'meta.json');
  }

  private partsDir(id: string): string {
    return join(this.fileDir(id), 'parts');
  }

  private tempPath(id: string, what: string): string {
    return join(this.fileDir(id), `${what}.${randomBytes(6).toString('hex')}.tmp`);
  }

  private async writeMeta(meta: FileMeta): Promise<void> {
    const temp = this.tempPath(meta.id, 'meta');
    await writeSynced(temp, JSON.stringify(meta));
    await rename(temp, this.metaPath(meta.id));
    await syncFolder(this.fileDir(meta.id));
  }

  private async readMeta(id: string): Promise<FileMeta> {
    try {
      return parseFileMeta(await readFile(this.metaPath(id), 'utf8'));
    } catch (err) {
      if (isMissing(err)) throw new FileNotFoundError(id);
      throw err;
    }
  }

  private async parts(id: string): Promise<LocalPart[]> {
    const dir = this.partsDir(id);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isMissing(err)) throw new FileNotFoundError(id);
      throw err;
    }
    const parts = await Promise.all(
      names.map(async (name) => {
        const index = partIndexOf(name);
        if (index === null) return null;
        const path = join(dir, name);
        try {
          return { index, path, size: (await stat(path)).size };
        } catch (err) {
          if (isMissing(err)) return null; // deleted while listed
          throw err;
        }
      }),
    );
    return parts.filter((p): p is LocalPart => p !== null).sort((a, b) => a.index - b.index);
  }

  async save(file: NewFile, content: AsyncIterable<Buffer | string>, maxBytes: number): Promise<StoredFile> {
    const meta = newFileMeta(file);
    await mkdir(this.partsDir(meta.id), { recursive: true });
    const limit = new SizeLimit(maxBytes);
    try {
      const temp = this.tempPath(meta.id, 'upload');
      // Streamed: the upload is never held in memory, whatever its size.
      await pipeline(limit.apply(content), createWriteStream(temp));
      const handle = await open(temp, 'r');
      await handle.sync().finally(() => handle.close());
      await rename(temp, join(this.partsDir(meta.id), partName(0)));
      // The metadata comes last: until it is there, the file does not exist for get or list.
      await this.writeMeta(meta);
    } catch (err) {
      await rm(this.fileDir(meta.id), { recursive: true, force: true });
      throw err;
    }
    return toStoredFile(meta, limit.bytes);
  }

  async create(file: NewFile): Promise<StoredFile> {
    const meta = newFileMeta(file);
    await mkdir(this.partsDir(meta.id), { recursive: true });
    await this.writeMeta(meta);
    return toStoredFile(meta, 0);
  }

  async writePart(id: string, index: number, text: string): Promise<void> {
    const name = partName(assertPartIndex(index));
    await this.readMeta(id);
    const temp = this.tempPath(id, `part-${name}`);
    try {
      await writeSynced(temp, text, 'wx');
      await rename(temp, join(this.partsDir(id), name));
      await syncFolder(this.partsDir(id));
    } catch (err) {
      await rm(temp, { force: true });
      // The file was deleted under the write.
      if (isMissing(err)) throw new FileNotFoundError(id);
      throw err;
    }
  }

  async get(id: string): Promise<StoredFile> {
    const [meta, parts] = await Promise.all([this.readMeta(id), this.parts(id)]);
    return toStoredFile(meta, totalSize(parts));
  }

  async list(owner: string): Promise<StoredFile[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    const files = await Promise.all(
      names.filter(isFileId).map(async (id) => {
        try {
          const [meta, parts] = await Promise.all([this.readMeta(id), this.parts(id)]);
          return { meta, bytes: totalSize(parts) };
        } catch {
          return null; // being saved or deleted, or unreadable: not listed
        }
      }),
    );
    return ownedNewestFirst(files, owner);
  }

  async read(id: string, range?: ByteRange): Promise<Readable> {
    assertFileId(id);
    assertByteRange(range);
    const [, parts] = await Promise.all([this.readMeta(id), this.parts(id)]);
    return concatParts(slicesOf(parts, range), async ({ part, start, end }) => ({
      stream: createReadStream(part.path, { start, end }),
      skip: 0,
    }));
  }

  async delete(id: string): Promise<void> {
    await this.readMeta(id);
    // The metadata goes first, so a file half deleted is already gone for get and list.
    await rm(this.metaPath(id), { force: true });
    await rm(this.fileDir(id), { recursive: true, force: true, maxRetries: 3 });
  }

  async identity(): Promise<string> {
    const path = join(this.dir, 'identity');
    try {
      return (await readFile(path, 'utf8')).trim();
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    // First use: written whole beside it, then linked into place, which fails if another process got there first.
    await mkdir(this.dir, { recursive: true });
    const temp = join(this.dir, `identity.${randomBytes(6).toString('hex')}.tmp`);
    await writeSynced(temp, randomUUID());
    try {
      await link(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await unlink(temp);
    }
    return (await readFile(path, 'utf8')).trim();
  }

  async mark(name: string): Promise<void> {
    assertMarkName(name);
    await mkdir(join(this.dir, 'marks'), { recursive: true });
    await writeSynced(join(this.dir, 'marks', name), '1');
  }

  async marked(name: string): Promise<boolean> {
    assertMarkName(name);
    try {
      await stat(join(this.dir, 'marks', name));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }
}
