// Conveyor as the benches beside llama-server run it: the API and its workers from a build, on one model,
// with the same threads, sequences and context per sequence as the server they are set beside.
import { resolve } from 'node:path';
import { HttpClient } from './http.mjs';
import { freePort } from './processes.mjs';
import { WORKER_THREADPOOL_SIZE } from './threadpool.mjs';

/** @import { Children, ReadyChild } from './processes.mjs' */
/** @import { Model } from './model.mjs' */

/**
 * @typedef {object} ConveyorOptions
 * @property {string} dist the build to run
 * @property {Model} model
 * @property {string} modelsDir
 * @property {string} redisUrl
 * @property {string} prefix REDIS_PREFIX, the run's own
 * @property {string} dataDir DATA_DIR: the uploaded files and batch outputs
 * @property {number} threads THREADS of each worker
 * @property {number} parallel PARALLEL of each worker
 * @property {number} contextSize CONTEXT_SIZE of each worker (per sequence)
 * @property {number} [workers] worker processes started with the API (default 1)
 * @property {Record<string, string>} [env] more settings, or others
 */

/**
 * Starts the API and `workers` workers on `redisUrl` and resolves once all are ready. `addWorker` starts
 * one more on the same queue; `env` is the settings they all got; `started` the processes, with how long
 * each took to be ready.
 * @param {Children} children
 * @param {ConveyorOptions} options
 * @returns {Promise<{ client: HttpClient, base: string, env: Record<string, string>,
 *                     addWorker: () => Promise<ReadyChild>, started: ReadyChild[] }>}
 */
export async function startConveyor(children, options) {
  const { dist, model, threads, parallel, contextSize, workers = 1 } = options;
  const port = await freePort();
  /** @type {Record<string, string>} */
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: options.prefix,
    MODEL: model.model,
    MODELS_DIR: options.modelsDir,
    DATA_DIR: options.dataDir,
    PARALLEL: String(parallel),
    THREADS: String(threads),
    CONTEXT_SIZE: String(contextSize),
    FLASH_ATTENTION: 'auto',
    // As `npm run start:worker` and the worker images set it.
    UV_THREADPOOL_SIZE: WORKER_THREADPOOL_SIZE,
    ...options.env,
  };
  let count = 0;
  const addWorker = () =>
    children.launch(
      `worker${++count}`,
      process.execPath,
      [resolve(dist, 'apps/worker/src/main.js')],
      env,
      /Worker ready/,
    );
  const started = await Promise.all([
    children.launch('api', process.execPath, [resolve(dist, 'apps/api/src/main.js')], env, /listening on/),
    ...Array.from({ length: workers }, addWorker),
  ]);
  return { client: new HttpClient(), base: `http://127.0.0.1:${port}`, env, addWorker, started };
}
