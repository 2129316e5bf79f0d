#!/usr/bin/env node
// Runs the whole platform in the foreground on its embedded defaults: Redis
// (reused, or a private one started here), one CPU worker and the API.
// Ctrl-C stops everything this script started.
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { redisAnswers } from './redis-answers.mjs';

const root = resolve(import.meta.dirname, '..');

/** @import { ChildProcess } from 'node:child_process' */
/** @typedef {{ name: string, proc: ChildProcess, last?: boolean }} Child `last`: stopped after the others */

const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
/** @type {Child[]} */
const children = [];
let stopping = false;

/** @param {string} msg */
const log = (msg) => console.log(`[conveyor] ${msg}`);

async function ensureRedis() {
  // The sentinels name the primary: REDIS_URL's host is not used, and there is nothing to start here.
  if (process.env.REDIS_SENTINELS) {
    log(`Using Redis through the sentinels at ${process.env.REDIS_SENTINELS}`);
    return;
  }
  if (await redisAnswers(redisUrl)) {
    log(`Using Redis at ${redisUrl}`);
    return;
  }
  const url = new URL(redisUrl);
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(url.hostname);
  const hasServer = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!local || !hasServer) {
    console.error(
      `[conveyor] Nothing answers at REDIS_URL=${redisUrl}` +
        (local
          ? ' and redis-server is not on the PATH. Install Redis (e.g. apt-get install -y redis-server) or point REDIS_URL at one.'
          : '.'),
    );
    process.exit(1);
  }
  const port = url.port || '6379';
  const redis = spawn(
    'redis-server',
    ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  children.push({ name: 'redis', proc: redis, last: true });
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers(redisUrl)) {
      log(
        `No Redis answered at ${redisUrl}: started a private redis-server (pid ${redis.pid}) on port ${port}; it stops with this process.`,
      );
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  console.error(`[conveyor] Started redis-server on port ${port}, but it does not answer.`);
  await stop(1);
}

/**
 * Starts `node script` from the repository root, and stops the platform when it exits.
 * @param {string} name
 * @param {string} script
 * @param {Record<string, string>} [env] defaults the environment can override
 */
function run(name, script, env = {}) {
  const proc = spawn(process.execPath, [resolve(root, script)], {
    stdio: 'inherit',
    env: { ...env, ...process.env },
    cwd: root,
  });
  children.push({ name, proc });
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`[conveyor] ${name} exited (${signal ?? code}); stopping the platform.`);
    void stop(code || 1);
  });
}

/**
 * Stops every child this script started, then exits with `code`.
 * @param {number} code
 * @returns {Promise<void>}
 */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  /** @param {Child} c */
  const alive = (c) => c.proc.exitCode === null && c.proc.signalCode === null;
  /** @param {Child[]} group */
  const waitFor = (group) =>
    Promise.all(
      group.filter(alive).map(
        /** @returns {Promise<void>} */
        (c) =>
          new Promise((resolve) => {
            const kill = setTimeout(() => c.proc.kill('SIGKILL'), 15000);
            c.proc.once('exit', () => (clearTimeout(kill), resolve()));
            c.proc.kill('SIGTERM');
          }),
      ),
    );
  // API and workers first, so they finish their work while Redis is still there.
  await waitFor(children.filter((c) => !c.last));
  await waitFor(children.filter((c) => c.last));
  process.exit(code);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

await ensureRedis();
// One libuv thread: a token's decode and sampling then run on the same thread (see docs/operations/running-the-parts.md).
run('worker', 'dist/apps/worker/src/main.js', { UV_THREADPOOL_SIZE: '1' });
run('api', 'dist/apps/api/src/main.js');
