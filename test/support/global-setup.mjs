// Before any test file: a registry for the processes the run starts (see owned-processes.mjs), and a
// Redis at REDIS_URL. The medium and end-to-end tests need one; when none answers on this machine and
// redis-server is installed, a private one is started for the run, as `npm start` does.
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisAnswers } from '../../scripts/redis-answers.mjs';
import { createRegistry, parentDeathWrapper, REGISTRY_ENV } from './owned-processes.mjs';

/** @typedef {{ redis?: import('node:child_process').ChildProcess }} RunState */

export default async function globalSetup() {
  const registry = join(tmpdir(), `conveyor-test-processes-${process.pid}`);
  createRegistry(registry);
  process.env[REGISTRY_ENV] = registry;

  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  if (process.env.REDIS_SENTINELS || (await redisAnswers(url.toString()))) return;
  const local = ['127.0.0.1', 'localhost'].includes(url.hostname);
  if (!local || spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      `No Redis answers at ${url} and none can be started here: install redis-server, or point REDIS_URL at a Redis.`,
    );
  }
  const port = url.port || '6379';
  // Not an owned process: the teardown stops it after checking for leftovers.
  const [command, ...args] = [...parentDeathWrapper(), 'redis-server', '--port', port, '--bind', '127.0.0.1'];
  const redis = spawn(/** @type {string} */ (command), [...args, '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100 && !(await redisAnswers(url.toString())); i++) await new Promise((r) => setTimeout(r, 50));
  if (!(await redisAnswers(url.toString())))
    throw new Error(`Started redis-server on port ${port}, but it does not answer.`);
  console.log(`\nNo Redis answered at ${url}: started one for this run (pid ${redis.pid}).`);
  /** @type {RunState} */ (globalThis).redis = redis;
}
