#!/usr/bin/env node
// Builds llama.cpp's `llama-server` from the llama.cpp source that node-llama-cpp ships
// (node_modules/node-llama-cpp/llama/gitRelease.bundle), CPU only, Release. The build
// takes about 15 minutes on 2 cores, so it is cached outside the repository, keyed by
// the bundle's content, and reused by every later run: the benches compare against it,
// and workers run it for `llama-server` deployments when LLAMA_SERVER_BIN names no other
// (libs/engine/src/llama-server/llama-server-binary.ts finds it in the same place).
//
// Usage: npm run build:llama-server              prints the binary's path (builds it if missing)
// Env:   CONVEYOR_BENCH_CACHE   cache folder (default: ~/.cache/conveyor-bench)
//        LLAMA_SERVER_JOBS      parallel compile jobs (default: CPU count)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = resolve(ROOT, 'node_modules/node-llama-cpp/llama/gitRelease.bundle');

/**
 * The build's options. The CPU backend is built for this machine's CPU, but without AMX: a virtual
 * machine can advertise AMX while its kernel refuses the tile registers, and such a build dies of
 * SIGILL (`tilezero`) at its first matrix product. GCC lets an explicit -mno-* win over -march=native.
 */
const NO_AMX = '-mno-amx-tile -mno-amx-int8 -mno-amx-bf16';
const CMAKE_OPTIONS = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DGGML_NATIVE=ON',
  `-DCMAKE_C_FLAGS=${NO_AMX}`,
  `-DCMAKE_CXX_FLAGS=${NO_AMX}`,
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_CURL=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
];

/** @returns {string} the cache folder for the bundle's llama.cpp */
export function llamaServerCacheDir() {
  const base = process.env.CONVEYOR_BENCH_CACHE || join(os.homedir(), '.cache', 'conveyor-bench');
  const digest = createHash('sha256').update(readFileSync(BUNDLE)).digest('hex').slice(0, 16);
  return join(base, `llama.cpp-${digest}`);
}

/**
 * Runs `cmd args` in `cwd`, its output shown; throws when it cannot start or exits non-zero.
 * @param {string} cmd
 * @param {string[]} args
 * @param {string} [cwd]
 */
function sh(cmd, args, cwd) {
  const result = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new Error(`${cmd}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${result.status}`);
}

/**
 * Path of a built llama-server; builds it first when the cache has none.
 * @param {{ log?: (line: string) => void }} [options] `log` takes the progress lines (default: stderr)
 * @returns {string}
 */
export function ensureLlamaServer({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (!existsSync(BUNDLE)) throw new Error(`No llama.cpp source bundle at ${BUNDLE}: run npm install first`);
  const dir = llamaServerCacheDir();
  const binary = join(dir, 'build', 'bin', 'llama-server');
  // The options the binary was built with: a cache built with others is built again, in place.
  const stamp = join(dir, 'build', 'conveyor-options.txt');
  const options = CMAKE_OPTIONS.join('\n');
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === options) return binary;

  const src = join(dir, 'src');
  const build = join(dir, 'build');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(src, 'CMakeLists.txt'))) {
    rmSync(src, { recursive: true, force: true });
    log(`llama-server: unpacking ${BUNDLE}`);
    sh('git', ['clone', '--quiet', BUNDLE, src]);
  }
  const jobs = process.env.LLAMA_SERVER_JOBS || String(os.availableParallelism());
  log(`llama-server: building in ${build} with ${jobs} jobs (about 15 minutes on 2 cores, once)`);
  sh('cmake', ['-S', src, '-B', build, ...CMAKE_OPTIONS], dir);
  sh('cmake', ['--build', build, '--config', 'Release', '--target', 'llama-server', '-j', jobs], dir);
  if (!existsSync(binary)) throw new Error(`the build finished but ${binary} is missing`);
  writeFileSync(stamp, options);
  return binary;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    console.log(ensureLlamaServer());
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
