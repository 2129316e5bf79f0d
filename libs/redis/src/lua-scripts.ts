import { readFileSync } from 'node:fs';
import type { RedisClient } from './redis-connections.js';

/**
 * A Lua script kept in a `.lua` file beside the code that calls it, under the name it is called by on a
 * connection (`redis.<name>(...keys, ...args)`). The build copies `.lua` files into dist beside the
 * compiled code, so `file` resolves alike from sources (tests) and from dist.
 */
export interface LuaScript {
  readonly name: string;
  readonly file: URL;
}

/** A script's text and the number of keys its header names. */
export interface LoadedScript {
  readonly lua: string;
  readonly numberOfKeys: number;
}

/**
 * Reads a script and its header: the comment lines it opens with must hold a `-- KEYS: a, b` line (or
 * `-- KEYS: none`) and an `-- ARGV: ...` line. The number of names on the KEYS line is the number of
 * keys the script is registered with, so the header cannot drift from how the script is called. On a
 * cluster a script's keys must share one slot: a key it names from an argument (a prefix in ARGV) must
 * carry the same hash tag as its KEYS.
 */
export function loadScript(script: LuaScript): LoadedScript {
  const lua = readFileSync(script.file, 'utf8');
  const lines = lua.split('\n');
  const header = lines.slice(
    0,
    Math.max(
      0,
      lines.findIndex((line) => !line.startsWith('--')),
    ),
  );
  const field = (name: string) =>
    header
      .find((line) => line.startsWith(`-- ${name}:`))
      ?.slice(`-- ${name}:`.length)
      .trim();
  const keys = field('KEYS');
  if (keys === undefined || field('ARGV') === undefined)
    throw new Error(`${script.file.pathname}: its header must say its KEYS and ARGV ("-- KEYS: ...", "-- ARGV: ...")`);
  return { lua, numberOfKeys: keys === 'none' ? 0 : keys.split(',').length };
}

/** Defines each script as a command on `client`: sent by its SHA, loaded into Redis on first use. */
export function defineScripts(client: RedisClient, scripts: readonly LuaScript[]): void {
  for (const script of scripts) client.defineCommand(script.name, loadScript(script));
}
