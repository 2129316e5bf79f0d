import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { EnvReader } from './env-reader.js';
import { declaredSections, ENV_VARS, isDeclared, UndeclaredVariableError, type EnvName } from './env-vars.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const all = declaredSections().flatMap((s) => s.vars);

/** Source files of a folder, tests and scripts included; build output and dependencies left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', 'results'].includes(entry.name) ? [] : sources(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** `process.env.<name>`, `process.env['<name>']`, `env.<name>`: the variables a file reads without the reader. */
const READ = /\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g;

describe('the declared environment variables', () => {
  it('declare each name once, in one section', () => {
    expect(all.map((v) => v.name).sort()).toEqual(Object.keys(ENV_VARS).sort());
    expect(new Set(all.map((v) => v.name)).size).toBe(all.length);
  });

  it.each(all.map((v) => [v.name, v] as const))('%s has a meaning, a default, and a default it allows', (name, v) => {
    expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(v.meaning).toMatch(/^\S.*\.$/);
    expect(v.default !== undefined || v.defaultText !== undefined).toBe(true);
    if (v.kind === 'int') {
      expect(v.min).toBeLessThanOrEqual(v.max);
      if (v.default !== undefined) expect(v.default >= v.min && v.default <= v.max).toBe(true);
    }
    if (v.kind === 'enum') expect(v.values).toContain(v.default);
  });

  it('are the only ones the reader reads', () => {
    const r = new EnvReader({ NOT_DECLARED: '1' });
    expect(() => r.optionalString('NOT_DECLARED' as EnvName)).toThrow(UndeclaredVariableError);
    expect(() => r.int('NOT_DECLARED' as 'PORT')).toThrow('NOT_DECLARED is not declared');
  });

  it('are read by the API, the workers and the libraries through the reader only', () => {
    const direct: string[] = [];
    for (const folder of ['apps', 'libs']) {
      for (const file of sources(join(ROOT, folder))) {
        if (/\.(spec|medium-spec)\.ts$/.test(file)) continue;
        for (const match of readFileSync(file, 'utf8').matchAll(READ))
          direct.push(`${relative(ROOT, file)}: ${match[0]}`);
      }
    }
    expect(direct).toEqual([]);
  });

  it('include every variable the platform, its scripts, benches and tests read directly', () => {
    const undeclared: string[] = [];
    for (const folder of ['apps', 'libs', 'scripts', 'bench', 'test']) {
      for (const file of sources(join(ROOT, folder))) {
        for (const match of readFileSync(file, 'utf8').matchAll(READ)) {
          const name = match[1] ?? match[2]!;
          if (!isDeclared(name)) undeclared.push(`${relative(ROOT, file)}: ${name}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });
});
