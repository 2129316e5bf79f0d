import type { QueuedJobData } from '@conveyor/queue';

/** Jobs of a deployment by state: requests waiting (any service tier), batch lines waiting, running. */
export interface JobCounts {
  waiting: number;
  batch: number;
  active: number;
}

/**
 * The job queue: where every generation and embedding job goes, and how one is taken back or
 * stopped. Services depend on this port; BullMQ is the adapter behind it.
 */
export abstract class JobQueue {
  /** Whether the queue's store answers now; while it does not, requests are refused at once. */
  abstract get reachable(): boolean;
  /**
   * Queues a job on its deployment's queue, or, given a worker (its route name), on that worker's own
   * queue: whatever that worker cannot take goes on to the deployment's queue, so nothing waits there.
   */
  abstract enqueue(job: QueuedJobData, worker?: string | null): Promise<void>;
  /**
   * Best effort: drop the job if it is still waiting, and tell a worker running it to stop. True when it
   * was dropped while waiting: no worker will see it end.
   */
  abstract cancel(deployment: string, requestId: string): Promise<boolean>;
  /** A request's job if the queue still has it (running, or finished within its retention). */
  abstract find(requestId: string): Promise<QueuedJobData | null>;
  abstract counts(deployment: string): Promise<JobCounts>;
  /** The deployment's own queue's jobs by every state its store knows (BullMQ's: waiting, active, completed, ...). */
  abstract countsByState(deployment: string): Promise<Record<string, number>>;
  /** Whether the deployment's queues (its own and its workers') still hold the job, in any state. */
  abstract exists(deployment: string, jobId: string): Promise<boolean>;
  /** Takes the job back if no worker has started it; false when one has (or it is gone). */
  abstract withdraw(deployment: string, requestId: string): Promise<boolean>;
  /**
   * Calls `listener` each time the queue's store answers again after an outage (a restart, a failover).
   * Jobs it had acknowledged may be gone then.
   */
  abstract onReconnect(listener: () => void): void;
}
