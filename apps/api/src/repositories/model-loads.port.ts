/**
 * Which on-demand deployments a worker is loading now (one load per deployment in the fleet). Services
 * depend on this port; the repository reading the loaders' claims in Redis implements it.
 */
export abstract class ModelLoads {
  abstract loading(deployments: readonly string[]): Promise<Set<string>>;
}
