import { createHash } from 'node:crypto';

/** Keys are configured and compared by their SHA-256 only. */
export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
