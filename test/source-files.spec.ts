import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = resolve(import.meta.dirname, '..');

/**
 * A file a newcomer can hold in mind at once. A longer one must open with a comment saying why it is one
 * file (a table, a contract run against several implementations), so its length is a choice, not drift.
 */
const MAX_LINES = 300;
const SOURCE = /\.(ts|mts|mjs|js|lua)$/;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourcesUnder(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

/** Whether the file's first line that is not blank starts a comment. */
function opensWithComment(text: string): boolean {
  const first = text.split('\n').find((line) => line.trim() !== '');
  return first !== undefined && /^\s*(\/\/|\/\*|--)/.test(first);
}

describe('source files in apps/ and libs/', () => {
  const files = [...sourcesUnder(join(root, 'apps')), ...sourcesUnder(join(root, 'libs'))];

  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it(`keep to ${MAX_LINES} lines, or open with a comment that says why not`, () => {
    const unexplained = files
      .map((path) => ({ path, text: readFileSync(path, 'utf8') }))
      .filter(({ text }) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0) > MAX_LINES)
      .filter(({ text }) => !opensWithComment(text))
      .map(({ path }) => relative(root, path));
    expect(unexplained).toEqual([]);
  });
});
