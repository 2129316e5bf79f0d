import type { FlashAttention, PromptCacheMode } from '../config.types.js';
import type { EnvReader } from '../env/env-reader.js';

/** The settings of the environment's deployment, and of each file deployment that leaves them out. */
export interface DeploymentDefaults {
  contextSize: number;
  promptCharsPerToken: number;
  parallel: number;
  threads: number;
  flashAttention: FlashAttention;
  promptCache: PromptCacheMode;
  promptCacheRam: number | null;
}

/** A prompt cache setting: its mode, or a boolean (on is the default mode, `full`). */
export function promptCacheMode(value: PromptCacheMode | boolean | string): PromptCacheMode {
  if (value === 'exact' || value === 'off' || value === 'full') return value;
  return value === false || value === 'false' || value === '0' || value === 'no' ? 'off' : 'full';
}

export function readDeploymentDefaults(r: EnvReader): DeploymentDefaults {
  return {
    contextSize: r.int('CONTEXT_SIZE'),
    promptCharsPerToken: r.int('PROMPT_CHARS_PER_TOKEN'),
    parallel: r.int('PARALLEL'),
    threads: r.int('THREADS'),
    flashAttention: r.oneOf('FLASH_ATTENTION'),
    promptCache: promptCacheMode(r.oneOf('PROMPT_CACHE')),
    // Unset is its own value: the worker caps the default by the memory free where it runs.
    promptCacheRam: r.optionalString('PROMPT_CACHE_RAM') === undefined ? null : r.int('PROMPT_CACHE_RAM', 0),
  };
}
