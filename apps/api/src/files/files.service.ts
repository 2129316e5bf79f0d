import { Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore, type StoredFile } from '@conveyor/batch-store';
import type { FileObject, FilePurpose } from '@conveyor/openai';
import type { Readable } from 'node:stream';

export const toFileObject = (f: StoredFile): FileObject => ({
  id: f.id,
  object: 'file',
  bytes: f.bytes,
  created_at: f.createdAt,
  filename: f.filename,
  purpose: f.purpose as FilePurpose,
  status: 'processed',
  status_details: null,
  expires_at: null,
});

/** Files as one API key sees them: another key's files do not exist for it. */
@Injectable()
export class FilesService {
  constructor(private readonly store: FileStore) {}

  async get(owner: string, id: string): Promise<StoredFile> {
    const file = await this.store.get(id);
    if (file.owner !== owner) throw new FileNotFoundError(id);
    return file;
  }

  async list(owner: string, purpose?: string): Promise<FileObject[]> {
    return (await this.store.list(owner)).filter((f) => !purpose || f.purpose === purpose).map(toFileObject);
  }

  async content(owner: string, id: string): Promise<Readable> {
    await this.get(owner, id);
    return this.store.read(id);
  }

  async delete(owner: string, id: string): Promise<void> {
    await this.get(owner, id);
    await this.store.delete(id);
  }
}
