import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { toFile } from 'openai';

/**
 * An upload that streams from disk, so a 200 MB file is never read into memory at once.
 * @param {string} path
 * @returns {Promise<File>}
 */
export const fileFromPath = (path) => toFile(createReadStream(path), basename(path));
