import type { DeploymentOf } from '../core/engine-factory.js';
import type { SimulatedEngineOptions } from './simulated.engine.js';

/** The simulated engine's options, from a deployment's config: its pace and text, context and sequences. */
export function simulatedOptions(deployment: DeploymentOf<'simulated'>): SimulatedEngineOptions {
  const { ttftMs, tpotMs, outputTokens, text } = deployment.engine;
  return {
    ttftMs,
    tpotMs,
    outputTokens,
    text,
    contextSize: deployment.contextSize,
    sequences: deployment.parallel,
  };
}
