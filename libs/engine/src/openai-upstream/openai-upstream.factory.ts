import type { EngineFactory } from '../core/engine-factory.js';
import { openAiUpstreamOptions } from './openai-upstream.config.js';
import { OpenAiUpstreamEngine } from './openai-upstream.engine.js';

/** An OpenAI-compatible server already running: nothing starts; the worker's warm-up finds out whether it answers. */
export const startOpenAiUpstreamEngine: EngineFactory<'openai'> = async (deployment, host) => {
  const options = openAiUpstreamOptions(deployment, host);
  return {
    engine: new OpenAiUpstreamEngine(options),
    describe: `${options.model} at ${options.url} (an OpenAI-compatible upstream${options.images ? ', with images' : ''})`,
  };
};
