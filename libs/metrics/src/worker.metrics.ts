import { counter, gauge } from './metric-spec.js';

// What a worker's engines count, served on the worker's own metrics port (WORKER_METRICS_PORT).

export const LLAMA_SERVER_UNCACHED_RETRIES = counter({
  name: 'conveyor_llama_server_uncached_retries_total',
  help: 'Requests llama-server failed with its prompt cache on and that were sent again without it.',
  labels: ['deployment', 'reason'],
});

export const PROMPT_CACHE_RAM_BYTES = gauge({
  name: 'conveyor_prompt_cache_ram_bytes',
  help: "Bytes of host memory holding prefixes pushed out of a worker's sequences, kept for later prompts (PROMPT_CACHE_RAM), by deployment: node-llama-cpp in process",
  labels: ['deployment'],
});

export const PROMPT_CACHE_RAM_EVENTS = counter({
  name: 'conveyor_prompt_cache_ram_events_total',
  help:
    'What the prompt cache in host memory did, by deployment: saved (a prefix cut off a sequence was kept), ' +
    'restored (read back into a sequence for a prompt beginning with it), evicted (least recently used, past the budget), ' +
    'superseded (a longer entry begins with it), failed (a state could not be written or read back)',
  labels: ['deployment', 'event'],
});

// vLLM's name and meaning: each vLLM server reports its own, as each worker does here.
export const VLLM_KV_CACHE_USAGE = gauge({
  name: 'vllm:kv_cache_usage_perc',
  help: "Fraction of a worker's KV cache cells in use, 1 meaning all (running requests and the prompt cache's kept cells), for engines that can tell: node-llama-cpp in process",
  labels: ['model_name'],
});

export const MODEL_LOADS = counter({
  name: 'conveyor_model_loads_total',
  help: "Models a worker loaded or unloaded, by deployment and event: loaded (an on-demand deployment's queue had work and no worker), failed (the load threw; its waiting requests were failed), unloaded (least recently used and idle, for another model's room)",
  labels: ['deployment', 'event'],
});

export const MODEL_MEMORY_HELD = gauge({
  name: 'conveyor_model_memory_held_mib',
  help: "MiB of a worker's memory budget (WORKER_MEMORY_BUDGET_MB) its loaded models take, by deployment, as estimated before each load",
  labels: ['deployment'],
});
