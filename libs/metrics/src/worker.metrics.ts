import { counter, gauge } from './metric-spec.js';

// What a worker's engines count, served on the worker's own metrics port (WORKER_METRICS_PORT).

export const LLAMA_SERVER_UNCACHED_RETRIES = counter({
  name: 'conveyor_llama_server_uncached_retries_total',
  help: 'Requests llama-server failed with its prompt cache on and that were sent again without it.',
  labels: ['deployment', 'reason'],
});

// vLLM's name and meaning: each vLLM server reports its own, as each worker does here.
export const VLLM_KV_CACHE_USAGE = gauge({
  name: 'vllm:kv_cache_usage_perc',
  help: "Fraction of a worker's KV cache cells in use, 1 meaning all (running requests and the prompt cache's kept cells), for engines that can tell: node-llama-cpp in process",
  labels: ['model_name'],
});
