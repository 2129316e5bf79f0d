import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A file the console's page loads, read once. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * The console's files, by the name the page asks for: its own (built into `dist` beside this file, from
 * `assets/`) and the chart library's, from its package. Read into memory once, at start-up: a missing
 * file stops the API there rather than at a user's first visit, and no request names a path on disk.
 */
export function loadConsoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  const own = join(import.meta.dirname, 'assets');
  const uplot = join(createRequire(import.meta.url).resolve('uplot/package.json'), '..', 'dist');
  const files: Record<string, string> = {
    'index.html': join(own, 'index.html'),
    'console.js': join(own, 'console.js'),
    'console.css': join(own, 'console.css'),
    'uPlot.iife.min.js': join(uplot, 'uPlot.iife.min.js'),
    'uPlot.min.css': join(uplot, 'uPlot.min.css'),
  };
  return new Map(
    Object.entries(files).map(([name, path]) => [
      name,
      { body: readFileSync(path), contentType: TYPES[name.split('.').pop()!]! },
    ]),
  );
}
