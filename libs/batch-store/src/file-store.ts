import type { Readable } from 'node:stream';
import { FileNotFoundError } from './file-store.errors.js';

export interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  /** API key name that created the file; other keys cannot see it. */
  owner: string;
  createdAt: number;
  bytes: number;
}

export interface NewFile {
  filename: string;
  purpose: string;
  owner: string;
}

/** Bytes `start` to `end` of a file, both included; without `end`, to the end of the file. */
export interface ByteRange {
  start: number;
  end?: number;
}

/**
 * Where uploaded inputs and batch results live. The embedded default is the
 * local disk; a store shared by several API hosts implements the same port.
 */
export abstract class FileStore {
  /** Streams `content` into a new file; throws FileTooLargeError past `maxBytes` (nothing is kept then). */
  abstract save(file: NewFile, content: AsyncIterable<Buffer | string>, maxBytes: number): Promise<StoredFile>;
  /** An empty file whose content is written as numbered parts as it is produced (batch output). */
  abstract create(file: NewFile): Promise<StoredFile>;
  /**
   * Writes part `index` (0-based) of a file made by `create`, replacing any earlier write of that part,
   * durably: once this resolves the part survives a crash of this process (local disk: written to a
   * temporary file, fsynced, renamed; S3: one PUT). Readers see parts in index order; a part is never
   * seen half-written.
   */
  abstract writePart(id: string, index: number, text: string): Promise<void>;
  /** The file's metadata; `bytes` is the whole content's size now. */
  abstract get(id: string): Promise<StoredFile>;

  /** A file as one API key sees it: another key's file is reported exactly like a missing one. */
  async getOwned(id: string, owner: string): Promise<StoredFile> {
    const file = await this.get(id);
    if (file.owner !== owner) throw new FileNotFoundError(id);
    return file;
  }
  /** The files `owner` created, newest first. */
  abstract list(owner: string): Promise<StoredFile[]>;
  /**
   * The content as it is now (every part written so far, in order), or the bytes `range` names
   * (inclusive `end`, open-ended without it).
   */
  abstract read(id: string, range?: ByteRange): Promise<Readable>;
  abstract delete(id: string): Promise<void>;
  /**
   * A stable identity of this store's contents, the same from every process that shares the store
   * (e.g. an id kept in the store itself, created on first use). The API refuses to start when
   * Redis already records another identity for its prefix: two stacks sharing Redis must share files.
   */
  abstract identity(): Promise<string>;
  /**
   * Records a fact about the platform, durably, in the store every replica shares (`name`: letters,
   * digits, `-`): kept when Redis loses its data, which a fact such as "API keys are in use" must outlive.
   */
  abstract mark(name: string): Promise<void>;
  /** Whether `mark(name)` was ever called on this store. */
  abstract marked(name: string): Promise<boolean>;
}

/** The names `mark` takes: they become a file or object name. */
export const assertMarkName = (name: string): void => {
  if (!/^[a-z0-9-]{1,64}$/.test(name)) throw new Error(`Not a mark name: ${JSON.stringify(name)}`);
};
