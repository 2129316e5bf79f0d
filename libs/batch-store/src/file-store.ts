import type { Readable } from 'node:stream';

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

/**
 * Where uploaded inputs and batch results live. The embedded default is the
 * local disk; a store shared by several API hosts implements the same port.
 */
export abstract class FileStore {
  /** Streams `content` into a new file; throws FileTooLargeError past `maxBytes` (nothing is kept then). */
  abstract save(file: NewFile, content: AsyncIterable<Buffer | string>, maxBytes: number): Promise<StoredFile>;
  /** An empty file that lines are appended to as they are produced. */
  abstract create(file: NewFile): Promise<StoredFile>;
  abstract append(id: string, text: string): Promise<void>;
  abstract get(id: string): Promise<StoredFile>;
  abstract list(owner: string): Promise<StoredFile[]>;
  /** The content as it is now, even while lines are still being appended. */
  abstract read(id: string): Promise<Readable>;
  abstract delete(id: string): Promise<void>;
}
