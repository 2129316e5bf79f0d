import type { ManagedProcess } from './platform.js';

/** Lines of a process's output that are not JSON objects (LOG_FORMAT=json promises one per line). */
export const nonJsonLines = (p: ManagedProcess): string[] =>
  p.output
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        const parsed: unknown = JSON.parse(line);
        return typeof parsed !== 'object' || parsed === null;
      } catch {
        return true;
      }
    });
