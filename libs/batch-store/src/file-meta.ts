import { newFileId } from './file-ids.js';
import type { NewFile, StoredFile } from './file-store.js';

/** What a store keeps beside a file's content: everything but its size, which the content itself tells. */
export interface FileMeta extends Omit<StoredFile, 'bytes'> {
  /** Creation time in milliseconds: lists are newest first, also among files of the same second. */
  createdAtMs: number;
}

export function newFileMeta(file: NewFile): FileMeta {
  const now = Date.now();
  return {
    id: newFileId(),
    filename: file.filename,
    purpose: file.purpose,
    owner: file.owner,
    createdAt: Math.floor(now / 1000),
    createdAtMs: now,
  };
}

export function parseFileMeta(text: string): FileMeta {
  const meta = JSON.parse(text) as Partial<FileMeta>;
  if (typeof meta.id !== 'string' || typeof meta.owner !== 'string' || typeof meta.createdAt !== 'number') {
    throw new Error(`Unreadable file metadata: ${text.slice(0, 200)}`);
  }
  return { ...meta, createdAtMs: meta.createdAtMs ?? meta.createdAt * 1000 } as FileMeta;
}

export const toStoredFile = (meta: FileMeta, bytes: number): StoredFile => ({
  id: meta.id,
  filename: meta.filename,
  purpose: meta.purpose,
  owner: meta.owner,
  createdAt: meta.createdAt,
  bytes,
});

/** A store's files of `owner`, newest first. */
export function ownedNewestFirst(files: Array<{ meta: FileMeta; bytes: number } | null>, owner: string): StoredFile[] {
  return files
    .filter((f): f is { meta: FileMeta; bytes: number } => f !== null && f.meta.owner === owner)
    .sort((a, b) => b.meta.createdAtMs - a.meta.createdAtMs)
    .map((f) => toStoredFile(f.meta, f.bytes));
}
