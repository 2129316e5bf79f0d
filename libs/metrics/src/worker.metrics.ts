import { counter } from './metric-spec.js';

// What a worker's engines count, served on the worker's own metrics port (WORKER_METRICS_PORT).

export const LLAMA_SERVER_UNCACHED_RETRIES = counter({
  name: 'conveyor_llama_server_uncached_retries_total',
  help: 'Requests llama-server failed with its prompt cache on and that were sent again without it.',
  labels: ['deployment', 'reason'],
});
