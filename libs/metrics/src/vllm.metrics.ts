import { FIRST_TOKEN_SECONDS, REQUEST_SECONDS, TOKEN_SECONDS } from './buckets.js';
import { counter, gauge, histogram } from './metric-spec.js';

// vLLM's names and meanings, which dashboards and autoscalers written for vLLM already query, with its
// `model_name` label holding the deployment's id. The API serves them for the whole fleet: gauges read
// from Redis when scraped, counters and histograms for the replies this replica relayed.

export const VLLM_REQUESTS_RUNNING = gauge({
  name: 'vllm:num_requests_running',
  help: 'Requests a worker is generating for (vLLM: in model execution batches)',
  labels: ['model_name'],
});

export const VLLM_REQUESTS_WAITING = gauge({
  name: 'vllm:num_requests_waiting',
  help: "Requests and batch lines queued for a deployment's workers and not started",
  labels: ['model_name'],
});

export const VLLM_PROMPT_TOKENS = counter({
  name: 'vllm:prompt_tokens_total',
  help: 'Prompt tokens of finished requests and batch lines',
  labels: ['model_name'],
});

export const VLLM_GENERATION_TOKENS = counter({
  name: 'vllm:generation_tokens_total',
  help: 'Generated tokens of finished requests and batch lines',
  labels: ['model_name'],
});

export const VLLM_TIME_TO_FIRST_TOKEN = histogram({
  name: 'vllm:time_to_first_token_seconds',
  help: 'Time from accepting a request to its first generated token reaching the API',
  labels: ['model_name'],
  buckets: FIRST_TOKEN_SECONDS,
});

export const VLLM_INTER_TOKEN_LATENCY = histogram({
  name: 'vllm:inter_token_latency_seconds',
  help: 'Time between two generated tokens of a reply, as they reach the API (tokens arriving together share the gap)',
  labels: ['model_name'],
  buckets: TOKEN_SECONDS,
});

export const VLLM_E2E_LATENCY = histogram({
  name: 'vllm:e2e_request_latency_seconds',
  help: 'Time from accepting a request to its last event',
  labels: ['model_name'],
  buckets: REQUEST_SECONDS,
});

export const VLLM_QUEUE_TIME = histogram({
  name: 'vllm:request_queue_time_seconds',
  help: 'Time a request waited in the queue before a worker started it',
  labels: ['model_name'],
  buckets: FIRST_TOKEN_SECONDS,
});

export const VLLM_PREFIX_CACHE_QUERIES = counter({
  name: 'vllm:prefix_cache_queries_total',
  help: 'Prompt tokens looked up in the prompt cache (every prompt token of a finished request or batch line)',
  labels: ['model_name'],
});

export const VLLM_PREFIX_CACHE_HITS = counter({
  name: 'vllm:prefix_cache_hits_total',
  help: "Prompt tokens found in the prompt cache: reused from a sequence's KV cells instead of computed",
  labels: ['model_name'],
});
