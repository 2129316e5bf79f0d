import { describeContext, type EngineFactory } from '../core/engine-factory.js';
import { resolveModelSource } from '../core/model-source.js';
import { findLlamaServer } from './llama-server-binary.js';
import { llamaServerOptions } from './llama-server.config.js';
import { LlamaServerEngine } from './llama-server.engine.js';

/** A llama.cpp server the worker runs as its child: its binary is found, its model and projector resolved, then it starts. */
export const startLlamaServerEngine: EngineFactory<'llama-server'> = async (deployment, host) => {
  // Found before anything is downloaded or generated: without a binary there is nothing to start.
  let binary: string;
  try {
    binary = await findLlamaServer(host.llamaServerBin, host.llamaServerCache);
  } catch (err) {
    throw new Error(`Deployment "${deployment.id}" runs on llama-server: ${(err as Error).message}`, { cause: err });
  }
  const modelPath = await resolveModelSource(deployment.model, host.modelsDir, host.log);
  const { mmproj } = deployment.engine;
  const mmprojPath = mmproj ? await resolveModelSource(mmproj, host.modelsDir, host.log) : null;
  const engine = await LlamaServerEngine.start(llamaServerOptions(deployment, host, { binary, modelPath, mmprojPath }));
  const projector = mmprojPath ? ` with projector ${mmprojPath}` : '';
  return {
    engine,
    describe: `${modelPath}${projector} in llama-server ${binary} (pid ${engine.pid}) (${describeContext(deployment)})`,
  };
};
