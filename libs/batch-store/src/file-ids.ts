import { randomBytes } from 'node:crypto';
import { InvalidFileIdError } from './file-store.errors.js';

const FILE_ID = /^file-[A-Za-z0-9]{24}$/;

export const newFileId = (): string => `file-${randomBytes(12).toString('hex')}`;

export const isFileId = (id: string): boolean => FILE_ID.test(id);

/** Returns the id if it is one we could have issued; anything else (`../x`, `file-a/b`) is refused. */
export function assertFileId(id: string): string {
  if (!isFileId(id)) throw new InvalidFileIdError(id);
  return id;
}
