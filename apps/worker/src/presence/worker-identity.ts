import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { routeWorkerName } from '@conveyor/queue';

/** Who this worker process is: its id in heartbeats and job records, and its name in queue and key names. */
export interface WorkerIdentity {
  /** `host:pid`, recorded on each job as processedBy, so operators can tell which worker ran it. */
  readonly id: string;
  readonly routeName: string;
  /**
   * This process alone, `<routeName>~<random>`: what its heartbeat announces for takeover, and the
   * beginning of every BullMQ lock token it holds. `host:pid` is not enough: a container restarted in
   * its pod comes back with the same host name and pid 1, and must not vouch for its dead predecessor.
   */
  readonly instance: string;
}

export const WORKER_IDENTITY = Symbol('WORKER_IDENTITY');

export function workerIdentity(): WorkerIdentity {
  const id = `${hostname()}:${process.pid}`;
  const routeName = routeWorkerName(id);
  // `~` is not in a route name, so the instance splits back into its route name unambiguously.
  return { id, routeName, instance: `${routeName}~${randomBytes(6).toString('hex')}` };
}

/** The route name (and so the own queue) of the process an instance names. */
export const routeNameOfInstance = (instance: string): string => instance.slice(0, instance.lastIndexOf('~'));

/**
 * The id a BullMQ worker of this process takes for `role` (its queue): BullMQ makes each lock token
 * `<worker id>:<n>`, so every token of the process begins with `instanceTokenPrefix(instance)`.
 */
export const bullWorkerId = (instance: string, role: string): string => `${instanceTokenPrefix(instance)}${role}`;

/** What every lock token held by the process `instance` begins with. */
export const instanceTokenPrefix = (instance: string): string => `${instance}~`;
