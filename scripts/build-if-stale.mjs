#!/usr/bin/env node
// Builds only when a source or build setting changed since the last build, so `npm start`
// starts at once on an unchanged checkout instead of compiling everything every time.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const SETTINGS = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];

/**
 * The newest modification time under `dir` of the files the build reads or copies: TypeScript, and the
 * Lua scripts it copies beside the compiled code.
 * @param {string} dir
 * @returns {number}
 */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|lua)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const inputs = Math.max(
  newestSource(join(root, 'apps')),
  newestSource(join(root, 'libs')),
  ...SETTINGS.map((f) => (existsSync(join(root, f)) ? statSync(join(root, f)).mtimeMs : 0)),
);
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built >= inputs) {
  console.log('[conveyor] Build is up to date.');
  process.exit(0);
}
console.log('[conveyor] Sources changed since the last build: building.');
// Stamped with the time the build started, so a file saved during the build still counts as newer.
const startedAt = new Date();
const result = spawnSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, startedAt.toISOString());
utimesSync(stamp, startedAt, startedAt);
