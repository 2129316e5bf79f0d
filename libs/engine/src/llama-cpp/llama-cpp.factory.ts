import { describeContext, type EngineFactory } from '../core/engine-factory.js';
import { resolveModelSource } from '../core/model-source.js';
import { llamaCppOptions } from './llama-cpp.config.js';
import { LlamaCppEngine } from './llama-cpp.engine.js';

/** node-llama-cpp in the worker's own process: the model is found (or generated, or downloaded), then loaded. */
export const startLlamaCppEngine: EngineFactory<'llama-cpp'> = async (deployment, host) => {
  const modelPath = await resolveModelSource(deployment.model, host.modelsDir, host.log);
  const lora = deployment.lora
    ? { path: await resolveModelSource(deployment.lora.path, host.modelsDir, host.log), scale: deployment.lora.scale }
    : undefined;
  const options = { ...llamaCppOptions(deployment, host, modelPath), ...(lora ? { lora } : {}) };
  const engine = await LlamaCppEngine.load(options);
  // The budget is resolved here from the memory free now: the log says what it came to.
  const ram = engine.hostCache.budget
    ? `, ${Math.round(engine.hostCache.budget / 2 ** 20)} MiB of it in host memory`
    : '';
  return {
    engine,
    describe:
      `${modelPath}${lora ? ` with the adapter ${lora.path} (scale ${lora.scale})` : ''} ` +
      `(${describeContext(deployment)}, prompt cache ${deployment.promptCache}${ram})`,
  };
};
