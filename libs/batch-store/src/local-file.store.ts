import { createReadStream, createWriteStream } from 'node:fs';
import { appendFile, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertFileId, newFileId } from './file-ids.js';
import { FileNotFoundError, FileTooLargeError } from './file-store.errors.js';
import { FileStore, type NewFile, type StoredFile } from './file-store.js';

type FileMeta = Omit<StoredFile, 'bytes'>;

/** Files on local disk: `<dir>/<id>` holds the content, `<id>.json` its metadata. */
export class LocalFileStore extends FileStore {
  private ready: Promise<unknown> | null = null;

  constructor(private readonly dir: string) {
    super();
  }

  private ensureDir(): Promise<unknown> {
    this.ready ??= mkdir(this.dir, { recursive: true });
    return this.ready;
  }

  // Paths are only ever built from validated ids.
  private contentPath(id: string): string {
    return join(this.dir, assertFileId(id));
  }

  private metaPath(id: string): string {
    return `${this.contentPath(id)}.json`;
  }

  async save(file: NewFile, content: AsyncIterable<Buffer | string>, maxBytes: number): Promise<StoredFile> {
    await this.ensureDir();
    const meta: FileMeta = { id: newFileId(), ...file, createdAt: Math.floor(Date.now() / 1000) };
    const path = this.contentPath(meta.id);
    let bytes = 0;
    async function* limited(source: AsyncIterable<Buffer | string>) {
      for await (const chunk of source) {
        bytes += Buffer.byteLength(chunk);
        if (bytes > maxBytes) throw new FileTooLargeError(maxBytes);
        yield chunk;
      }
    }
    try {
      await pipeline(limited(content), createWriteStream(path));
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    await writeFile(this.metaPath(meta.id), JSON.stringify(meta));
    return { ...meta, bytes };
  }

  async create(file: NewFile): Promise<StoredFile> {
    await this.ensureDir();
    const meta: FileMeta = { id: newFileId(), ...file, createdAt: Math.floor(Date.now() / 1000) };
    await writeFile(this.contentPath(meta.id), '');
    await writeFile(this.metaPath(meta.id), JSON.stringify(meta));
    return { ...meta, bytes: 0 };
  }

  async append(id: string, text: string): Promise<void> {
    await appendFile(this.contentPath(id), text);
  }

  async get(id: string): Promise<StoredFile> {
    const metaPath = this.metaPath(id);
    try {
      const meta = JSON.parse(await readFile(metaPath, 'utf8')) as FileMeta;
      const { size } = await stat(this.contentPath(id));
      return { ...meta, bytes: size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new FileNotFoundError(id);
      throw err;
    }
  }

  async list(owner: string): Promise<StoredFile[]> {
    await this.ensureDir();
    const ids = (await readdir(this.dir)).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length));
    const files = await Promise.all(ids.map((id) => this.get(id).catch(() => null)));
    return files.filter((f): f is StoredFile => f !== null && f.owner === owner).sort((a, b) => b.createdAt - a.createdAt);
  }

  async read(id: string): Promise<Readable> {
    await this.get(id);
    return createReadStream(this.contentPath(id));
  }

  async delete(id: string): Promise<void> {
    await this.get(id);
    await rm(this.metaPath(id), { force: true });
    await rm(this.contentPath(id), { force: true });
  }
}
