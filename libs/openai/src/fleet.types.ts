/**
 * `GET /v1/admin/fleet` (the platform's own, admin key): each deployment's workers and how busy their
 * sequences are, and the work waiting for them by band, read from Redis as the autoscaling signal is.
 */
export interface AdminFleet {
  object: 'list';
  data: FleetDeployment[];
}

export interface FleetDeployment {
  object: 'fleet.deployment';
  id: string;
  pool: 'cpu' | 'gpu';
  load: 'pinned' | 'on-demand';
  /** `ready` (a live worker serves it), `loading` (one loads it), `cold` (on demand, none holds it), `no_workers`. */
  status: 'ready' | 'loading' | 'cold' | 'no_workers';
  /** Sequences of the live workers: all of them, and those running a job (known where the workers announced them). */
  sequences: { total: number; busy: number | null };
  workers: FleetWorker[];
  /** Jobs waiting in the deployment's queue, by band, first served to last. */
  waiting: { priority: number; default: number; flex: number; batch: number };
  /** Jobs waiting in the workers' own queues (routed to the worker that holds their prompt). */
  routed: number;
  running: number;
  /** Lines of running batches still in their input file. */
  batch_unqueued: number;
}

export interface FleetWorker {
  id: string;
  /** Sequences it has; of them, free as it last announced (null: not announced, as for models on demand). */
  sequences: number;
  free: number | null;
}
