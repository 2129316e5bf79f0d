export { FileStore, type ByteRange, type NewFile, type StoredFile } from './file-store.js';
export { LocalFileStore } from './local-file.store.js';
export type { S3Location } from './s3-file.store.js';
export type { S3ClientSettings } from './s3-client.js';
export { createFileStore } from './create-file-store.js';
export { FileNotFoundError, FileTooLargeError, InvalidFileIdError } from './file-store.errors.js';
export { assertFileId, isFileId, newFileId } from './file-ids.js';
