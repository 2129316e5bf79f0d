import type { EngineFactory } from '../core/engine-factory.js';
import { simulatedOptions } from './simulated.config.js';
import { SimulatedEngine } from './simulated.engine.js';

/** No model to load: replies at a configured pace, for capacity and fault tests. */
export const startSimulatedEngine: EngineFactory<'simulated'> = async (deployment) => {
  const options = simulatedOptions(deployment);
  return {
    engine: new SimulatedEngine(options),
    describe:
      `a simulated model (no model loaded: first token after ${options.ttftMs} ms, then one each ${options.tpotMs} ms; ` +
      `context ${options.contextSize} x ${options.sequences} sequences)`,
  };
};
