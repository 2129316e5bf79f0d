import { Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore, type StoredFile } from '@conveyor/batch-store';
import { ErrorCode, type FileObject, type FilePurpose } from '@conveyor/openai';
import type { Readable } from 'node:stream';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { BATCH_OWN_FILES } from '../repositories/batch-record.js';
import { FileExpiries } from '../repositories/file-expiries.port.js';
import { parseByteRange } from './byte-range.js';

/** A file with when it expires (seconds; null: never), as the Files API shows it. */
export type ShownFile = StoredFile & { expiresAt: number | null };

const nowSeconds = () => Math.floor(Date.now() / 1000);

export const toFileObject = (f: ShownFile): FileObject => ({
  id: f.id,
  object: 'file',
  bytes: f.bytes,
  created_at: f.createdAt,
  filename: f.filename,
  purpose: f.purpose as FilePurpose,
  status: 'processed',
  status_details: null,
  expires_at: f.expiresAt,
});

export interface FileContent {
  stream: Readable;
  /** Set for a ranged read: bytes `start` to `end` (included) of `size`. */
  range: { start: number; end: number; size: number } | null;
}

/**
 * Files as one API key sees them: another key's files do not exist for it, and neither does an expired
 * one, from the second it expires, whether or not the sweeper has removed it yet.
 */
@Injectable()
export class FilesService {
  constructor(
    private readonly store: FileStore,
    private readonly expiries: FileExpiries,
  ) {}

  /** A batch's own files (a Message Batch's, a plan) are deleted with it, so they are reported as missing here. */
  async get(owner: string, id: string): Promise<ShownFile> {
    const file = await this.store.getOwned(id, owner);
    if (BATCH_OWN_FILES.has(file.purpose)) throw new FileNotFoundError(id);
    const [expiresAt = null] = await this.expiries.expiresAt([id]);
    if (expiresAt !== null && expiresAt <= nowSeconds()) throw new FileNotFoundError(id);
    return { ...file, expiresAt };
  }

  async list(owner: string, purpose?: string): Promise<FileObject[]> {
    const files = (await this.store.list(owner)).filter(
      (f) => !BATCH_OWN_FILES.has(f.purpose) && (!purpose || f.purpose === purpose),
    );
    const expiries = await this.expiries.expiresAt(files.map((f) => f.id));
    const now = nowSeconds();
    return files
      .map((f, i) => ({ ...f, expiresAt: expiries[i] ?? null }))
      .filter((f) => f.expiresAt === null || f.expiresAt > now)
      .map(toFileObject);
  }

  /** An upload's `expires_after`: it expires `seconds` after it was created. */
  async expire(file: StoredFile, seconds: number): Promise<ShownFile> {
    const expiresAt = file.createdAt + seconds;
    await this.expiries.expire([file.id], expiresAt);
    return { ...file, expiresAt };
  }

  /** The content, or the bytes a Range header names (`range` is then set, with the file's size when asked). */
  async content(owner: string, id: string, rangeHeader?: string): Promise<FileContent> {
    const file = await this.get(owner, id);
    const asked = parseByteRange(rangeHeader, file.bytes);
    if (asked.kind === 'unsatisfiable') {
      throw new OpenAiHttpError(
        416,
        'invalid_request_error',
        `The range '${rangeHeader}' names no byte of this file of ${file.bytes} bytes.`,
        'range',
        ErrorCode.rangeNotSatisfiable,
        { 'Content-Range': `bytes */${file.bytes}`, 'Accept-Ranges': 'bytes' },
      );
    }
    if (asked.kind === 'whole') return { stream: await this.store.read(id), range: null };
    const { start, end } = asked;
    return { stream: await this.store.read(id, { start, end }), range: { start, end, size: file.bytes } };
  }

  async delete(owner: string, id: string): Promise<void> {
    await this.get(owner, id);
    await this.store.delete(id);
    await this.expiries.forget(id);
  }
}
