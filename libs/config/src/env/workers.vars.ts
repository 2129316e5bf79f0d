import type { EnvVarSpec } from './env-var.js';

export const WORKERS_VARS = {
  WORKER_POOL: {
    kind: 'enum',
    default: 'cpu',
    values: ['cpu', 'gpu'],
    meaning: 'The pool whose deployments a worker serves, as `--pool` (the flag wins).',
  },
  WORKER_DEPLOYMENTS: {
    kind: 'text',
    defaultText: "the pool's deployments",
    allowedText: 'comma-separated deployment ids',
    meaning: 'Exactly the deployments a worker serves, as `--deployments` (the flag wins); overrides the pool.',
  },
  HEARTBEAT_MS: {
    kind: 'int',
    default: 2000,
    min: 100,
    max: 60_000,
    meaning:
      'How often a worker announces itself in Redis, from a thread of its own; it counts as gone after three missed beats, and its running jobs are then taken over by another worker.',
  },
  WORKER_LOCK_MS: {
    kind: 'int',
    default: 30_000,
    min: 500,
    max: 10 * 60_000,
    meaning:
      "A job's lock: a worker that stops renewing it loses the job this long after. A killed worker's jobs are taken over sooner, when its heartbeat lapses; this bounds the rest (a worker whose main thread is frozen while its heartbeat goes on, a job whose taker never beat).",
  },
  WORKER_STALLED_INTERVAL_MS: {
    kind: 'int',
    default: 30_000,
    min: 250,
    max: 10 * 60_000,
    meaning: 'How often workers look for jobs whose lock lapsed, to run them again.',
  },
  WORKER_MAX_STALLS: {
    kind: 'int',
    default: 1,
    min: 0,
    max: 100,
    meaning: 'Times a job may lose its worker before it fails instead of running again.',
  },
  WORKER_SHUTDOWN_GRACE_MS: {
    kind: 'int',
    default: 30_000,
    min: 0,
    max: 60 * 60_000,
    meaning: 'After SIGTERM, how long running jobs may take to finish before they are handed back to the queue.',
  },
  WORKER_TEST_STALL_MS: {
    kind: 'int',
    default: 0,
    min: 0,
    max: 10 * 60_000,
    meaning:
      "For tests: a worker sent SIGUSR2 blocks its main thread this long, as one whose event loop stalls (a huge prompt, a loaded machine). 0: SIGUSR2 keeps Node's default (the process ends).",
  },
  WORKER_METRICS_PORT: {
    kind: 'int',
    default: 0,
    min: 0,
    max: 65535,
    meaning:
      "Where a worker serves Prometheus metrics of its own at `/metrics`, on every interface (`0`: it serves none): what its engines count, such as the requests llama-server failed in its prompt cache and answered without it, and the process's own figures. Each worker on one machine needs a port of its own.",
  },
  WORKER_MEMORY_BUDGET_MB: {
    kind: 'int',
    default: 0,
    min: 0,
    max: 1 << 30,
    meaning:
      'MiB of models and their contexts a worker may hold: pinned deployments count against it, and `load: on-demand` ones are loaded within it, the least recently used idle one unloaded to make room. 0: 80% of the memory free where the worker starts.',
  },
  MODEL_DEMAND_POLL_MS: {
    kind: 'int',
    default: 500,
    min: 50,
    max: 60_000,
    meaning:
      'How often a worker looks for `load: on-demand` deployments of its pool with requests waiting and no live worker: the most a cold model waits before one worker starts loading it.',
  },
  ALLOW_CPU_FALLBACK: {
    kind: 'bool',
    default: false,
    meaning: 'Let a gpu-pool worker run on the CPU when no GPU is usable, instead of refusing to start.',
  },
  LLAMA_SERVER_BIN: {
    kind: 'text',
    defaultText: 'the build of `npm run build:llama-server`',
    allowedText: 'an executable',
    meaning: 'The llama-server binary that `llama-server` deployments run.',
  },
  CONVEYOR_BENCH_CACHE: {
    kind: 'text',
    defaultText: '`~/.cache/conveyor-bench`',
    allowedText: 'a folder',
    meaning:
      'Where `npm run build:llama-server` caches its build, and so where a worker without `LLAMA_SERVER_BIN` looks for it.',
  },
  UV_THREADPOOL_SIZE: {
    kind: 'text',
    defaultText: "`1` in `npm run start:worker`, `npm start` and the cpu and vision worker images; libuv's 4 elsewhere",
    allowedText: 'a number of threads',
    meaning:
      "libuv's threads in the worker: one per deployment it serves keeps each token's decode and sampling on one thread. libuv reads it as it starts, so set it where the worker is launched; a worker without it logs a warning.",
  },
} as const satisfies Record<string, EnvVarSpec>;
