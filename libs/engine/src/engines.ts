import type { DeploymentConfig } from '@conveyor/config';
import type { EngineFactory, EngineHost, EngineKind, StartedEngine } from './core/engine-factory.js';
import { startLlamaCppEngine } from './llama-cpp/llama-cpp.factory.js';
import { startLlamaServerEngine } from './llama-server/llama-server.factory.js';
import { startOpenAiUpstreamEngine } from './openai-upstream/openai-upstream.factory.js';
import { startSimulatedEngine } from './simulated/simulated.factory.js';

/**
 * Every engine a deployment's `engine.kind` can name, and what starts it. Typed by kind, so a kind added
 * to the config does not compile until it has a factory here.
 */
export const ENGINE_FACTORIES: { readonly [K in EngineKind]: EngineFactory<K> } = {
  'llama-cpp': startLlamaCppEngine,
  'llama-server': startLlamaServerEngine,
  openai: startOpenAiUpstreamEngine,
  simulated: startSimulatedEngine,
};

/** Starts a deployment's engine, the one its `engine.kind` names. */
export function startEngine(deployment: DeploymentConfig, host: EngineHost): Promise<StartedEngine> {
  // The deployment's engine is of the kind looked up: each factory gets the config of its own kind.
  const factory = ENGINE_FACTORIES[deployment.engine.kind] as EngineFactory<EngineKind>;
  return factory(deployment, host);
}
