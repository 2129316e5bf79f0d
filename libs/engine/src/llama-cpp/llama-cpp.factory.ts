import { describeContext, type EngineFactory } from '../core/engine-factory.js';
import { resolveModelSource } from '../core/model-source.js';
import { llamaCppOptions } from './llama-cpp.config.js';
import { LlamaCppEngine } from './llama-cpp.engine.js';

/** node-llama-cpp in the worker's own process: the model is found (or generated, or downloaded), then loaded. */
export const startLlamaCppEngine: EngineFactory<'llama-cpp'> = async (deployment, host) => {
  const modelPath = await resolveModelSource(deployment.model, host.modelsDir, host.log);
  const engine = await LlamaCppEngine.load(llamaCppOptions(deployment, host, modelPath));
  return {
    engine,
    describe: `${modelPath} (${describeContext(deployment)}, prompt cache ${deployment.promptCache})`,
  };
};
