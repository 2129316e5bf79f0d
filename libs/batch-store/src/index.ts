export { FileStore, type NewFile, type StoredFile } from './file-store.js';
export { LocalFileStore } from './local-file.store.js';
export { FileNotFoundError, FileTooLargeError, InvalidFileIdError } from './file-store.errors.js';
export { assertFileId, isFileId, newFileId } from './file-ids.js';
