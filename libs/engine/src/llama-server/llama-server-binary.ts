import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** No llama-server binary to run: the message says how to get one. */
export class LlamaServerMissingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlamaServerMissingError';
  }
}

const HOW_TO_GET_ONE =
  'set LLAMA_SERVER_BIN to a llama.cpp llama-server binary, or run `npm run build:llama-server` once to build one ' +
  "from the llama.cpp source node-llama-cpp ships (about 15 minutes on 2 cores; it is cached in the user's cache folder)";

/** node-llama-cpp's copy of the llama.cpp source, whose hash names the cached build. */
function sourceBundle(): string {
  const entry = createRequire(import.meta.url).resolve('node-llama-cpp');
  return resolve(dirname(entry), '..', 'llama', 'gitRelease.bundle');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Where `npm run build:llama-server` (scripts/llama-server-build.mjs) caches its build under `cache`
 * (CONVEYOR_BENCH_CACHE): the folder named by the same hash of the bundled source, so a newer
 * node-llama-cpp never runs an older build.
 */
export async function cachedLlamaServerPath(cache: string): Promise<string> {
  const digest = (await sha256File(sourceBundle())).slice(0, 16);
  return join(cache, `llama.cpp-${digest}`, 'build', 'bin', 'llama-server');
}

const executable = (path: string): Promise<boolean> =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/**
 * The llama-server binary to run: LLAMA_SERVER_BIN's (`configured`) when set, else the build cached
 * under `cache`. Rejects with one message naming both ways to get one.
 */
export async function findLlamaServer(configured: string | null, cache: string): Promise<string> {
  if (configured) {
    if (await executable(configured)) return configured;
    throw new LlamaServerMissingError(
      `LLAMA_SERVER_BIN is ${configured}, which is not an executable file: ${HOW_TO_GET_ONE}.`,
    );
  }
  let cached: string;
  try {
    cached = await cachedLlamaServerPath(cache);
  } catch (err) {
    throw new LlamaServerMissingError(
      `No llama-server binary (node-llama-cpp's llama.cpp source is unreadable: ${(err as Error).message}): ${HOW_TO_GET_ONE}.`,
    );
  }
  if (await executable(cached)) return cached;
  throw new LlamaServerMissingError(`No llama-server binary (none at ${cached}): ${HOW_TO_GET_ONE}.`);
}
