/**
 * How many workers currently announce themselves for each deployment. Services depend on this
 * port; the repository reading the workers' heartbeats in Redis implements it.
 */
export abstract class LiveWorkers {
  abstract counts(deployments: readonly string[]): Promise<Map<string, number>>;
  abstract count(deployment: string): Promise<number>;
}
