/** A deployment's live workers and their sequences, as the workers last announced them. */
export interface DeploymentFleet {
  /** Ids of the workers announcing themselves for the deployment now. */
  workers: string[];
  /** Free sequences the live workers announced, summed (a worker that has not announced yet: none known). */
  free: number;
  /** Live workers that announced their free sequences. */
  announced: number;
  /** Each live worker's free sequences as it last announced them (null: not announced yet). */
  perWorker: { id: string; free: number | null }[];
}

/**
 * The live workers of each deployment and how busy their sequences are, for the fleet's gauges.
 * Services depend on this port; the repository reading the workers' heartbeats and announcements in
 * Redis implements it.
 */
export abstract class FleetState {
  abstract of(deployment: string): Promise<DeploymentFleet>;
}
