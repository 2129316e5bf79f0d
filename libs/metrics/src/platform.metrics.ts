import { PLATFORM_SECONDS, TOKENS_PER_SECOND } from './buckets.js';
import { counter, gauge, histogram } from './metric-spec.js';

// The API's own metrics. Gauges are read from Redis when scraped, so every replica reports the same
// fleet-wide values for them; counters and histograms count what this replica answered.

export const HTTP_REQUESTS = counter({
  name: 'conveyor_http_requests_total',
  help: 'HTTP requests answered, by route and status code',
  labels: ['method', 'route', 'status'],
});

export const QUEUE_WAIT = histogram({
  name: 'conveyor_queue_wait_seconds',
  help: 'Time from enqueueing a chat request to a worker starting it, by the service tier it was served at',
  labels: ['deployment', 'tier'],
  buckets: PLATFORM_SECONDS,
});

export const TIME_TO_FIRST_TOKEN = histogram({
  name: 'conveyor_time_to_first_token_seconds',
  help: 'Time from accepting a chat request to its first generated text reaching the API',
  labels: ['deployment'],
  buckets: PLATFORM_SECONDS,
});

export const PROMPT_TOKENS = counter({
  name: 'conveyor_prompt_tokens_total',
  help: 'Prompt tokens of finished requests and batch lines: computed by the worker, or reused from its prompt cache',
  labels: ['deployment', 'source'],
});

export const PREFIX_ROUTES = counter({
  name: 'conveyor_prefix_routes_total',
  help:
    'Requests whose prompt is long enough to route by: hit (sent to the worker holding its beginning), ' +
    'miss (no live worker holds it), saturated (the workers holding it had no free sequence)',
  labels: ['deployment', 'outcome'],
});

export const GENERATED_TOKENS = counter({
  name: 'conveyor_generated_tokens_total',
  help: 'Completion tokens generated for interactive requests',
  labels: ['deployment'],
});

export const TOKENS_PER_SECOND_OF_REPLY = histogram({
  name: 'conveyor_generation_tokens_per_second',
  help: 'Completion tokens per second of each interactive reply, from its first to its last event',
  labels: ['deployment'],
  buckets: TOKENS_PER_SECOND,
});

export const QUEUE_DEPTH = gauge({
  name: 'conveyor_queue_depth',
  help: 'Jobs per deployment queue: interactive waiting, batch lines waiting, running',
  labels: ['deployment', 'kind'],
});

export const QUEUE_JOBS = gauge({
  name: 'conveyor_queue_jobs',
  help:
    "Jobs in a deployment's BullMQ queue by BullMQ's state (waiting, prioritized, delayed, active, " +
    'completed, failed, paused, waiting-children); jobs routed to a worker wait in its own queue, not here',
  labels: ['deployment', 'state'],
});

export const LIVE_WORKERS = gauge({
  name: 'conveyor_live_workers',
  help: 'Workers announcing themselves for each deployment',
  labels: ['deployment'],
});

export const POOL_WORKERS = gauge({
  name: 'conveyor_pool_workers',
  help: "Live workers serving a pool's deployments (a worker serving several counts once)",
  labels: ['pool'],
});

export const SEQUENCES = gauge({
  name: 'conveyor_sequences',
  help:
    "Sequences (parallel replies) of a deployment's live workers: busy with a job, or free, as the workers " +
    'last announced them',
  labels: ['pool', 'deployment', 'state'],
});

export const BATCH_LINES = gauge({
  name: 'conveyor_batch_lines',
  help: 'Lines of batches still running, by state',
  labels: ['state'],
});

export const PENDING_WORK = gauge({
  name: 'conveyor_pending_work',
  help:
    'Jobs and batch lines a deployment has not finished: waiting (in its queue or a per-worker one), ' +
    'running, and lines of running batches not yet queued',
  labels: ['pool', 'deployment'],
});

export const BATCH_PLAN_GROUPS = counter({
  name: 'conveyor_batch_plan_groups_total',
  help: "Groups of lines sharing a beginning that batches' plans fed together, counted as each batch is validated",
  labels: [],
});

export const BATCH_LINES_FOLDED = counter({
  name: 'conveyor_batch_lines_folded_total',
  help: "Batch lines answered by an identical line's result instead of running (repeats folded by the batch's plan)",
  labels: ['deployment'],
});

export const BATCH_FOLDED_PROMPT_TOKENS = counter({
  name: 'conveyor_batch_folded_prompt_tokens_total',
  help: 'Prompt tokens of batch lines folded into an identical line: never evaluated',
  labels: ['deployment'],
});

export const REDIS_COMMANDS = counter({
  name: 'conveyor_redis_commands_total',
  help:
    "Commands the platform's Redis processed since it started (INFO total_commands_processed, summed over a " +
    "cluster's primaries), read when scraped: every API replica reports the same figure",
  labels: [],
});
