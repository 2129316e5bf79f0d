import { hostname } from 'node:os';
import { routeWorkerName } from '@conveyor/queue';

/** Who this worker process is: its id in heartbeats and job records, and its name in queue and key names. */
export interface WorkerIdentity {
  /** `host:pid`, recorded on each job as processedBy, so operators can tell which worker ran it. */
  readonly id: string;
  readonly routeName: string;
}

export const WORKER_IDENTITY = Symbol('WORKER_IDENTITY');

export function workerIdentity(): WorkerIdentity {
  const id = `${hostname()}:${process.pid}`;
  return { id, routeName: routeWorkerName(id) };
}
