import { Registry } from 'prom-client';
import {
  LLAMA_SERVER_UNCACHED_RETRIES,
  MODEL_LOADS,
  MODEL_MEMORY_HELD,
  PROMPT_CACHE_RAM_BYTES,
  PROMPT_CACHE_RAM_EVENTS,
  VLLM_KV_CACHE_USAGE,
  counterOf,
  gaugeOf,
} from '@conveyor/metrics';

/**
 * What engines count, in a registry of their own: the worker serves it on its metrics port
 * (`WORKER_METRICS_PORT`). Engines only count; they never serve. Declared in `@conveyor/metrics`, which
 * docs/metrics.md is generated from.
 */
export const engineMetrics = new Registry();

/**
 * Requests llama-server failed with its prompt cache on and answered when sent again without it
 * (`cache_prompt: false`), by deployment and by what llama-server said.
 */
export const uncachedRetries = counterOf(LLAMA_SERVER_UNCACHED_RETRIES, engineMetrics);

/** The engines that can tell how full their KV cache is, by deployment: read when the gauge is scraped. */
const kvCacheUsage = new Map<string, () => Promise<number>>();

gaugeOf(VLLM_KV_CACHE_USAGE, engineMetrics, async (gauge) => {
  for (const [model_name, usage] of kvCacheUsage) gauge.set({ model_name }, await usage());
});

/** Reports an engine's KV cache usage under its deployment until the returned function is called. */
export function reportKvCacheUsage(deployment: string, usage: () => Promise<number>): () => void {
  kvCacheUsage.set(deployment, usage);
  return () => {
    if (kvCacheUsage.get(deployment) === usage) kvCacheUsage.delete(deployment);
  };
}

/** What the prompt cache in host memory did, by deployment and event (saved, restored, evicted, …). */
export const promptCacheRamEvents = counterOf(PROMPT_CACHE_RAM_EVENTS, engineMetrics);

/** The engines with a prompt cache in host memory, by deployment: their bytes held, read when scraped. */
const promptCacheRam = new Map<string, () => number>();

gaugeOf(PROMPT_CACHE_RAM_BYTES, engineMetrics, (gauge) => {
  for (const [deployment, bytes] of promptCacheRam) gauge.set({ deployment }, bytes());
});

/** Reports an engine's host-memory prompt cache size under its deployment until the returned function is called. */
export function reportPromptCacheRam(deployment: string, bytes: () => number): () => void {
  promptCacheRam.set(deployment, bytes);
  return () => {
    if (promptCacheRam.get(deployment) === bytes) promptCacheRam.delete(deployment);
  };
}

/** Models loaded, failed and unloaded on demand, by deployment (OnDemandModels in the worker counts them). */
export const modelLoads = counterOf(MODEL_LOADS, engineMetrics);

/** The budget's MiB each model a worker holds takes, by deployment. */
export const modelMemoryHeld = gaugeOf(MODEL_MEMORY_HELD, engineMetrics);
