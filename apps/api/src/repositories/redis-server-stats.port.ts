/**
 * What the platform's Redis says of its own work, for the cost of a request in Redis commands. Services
 * depend on this port; the repository asking Redis (`INFO`) implements it.
 */
export abstract class RedisServerStats {
  /** Commands processed since the server started, summed over a cluster's primaries. */
  abstract commandsProcessed(): Promise<number>;
}
