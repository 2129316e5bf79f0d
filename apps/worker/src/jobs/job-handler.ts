import type { Job } from 'bullmq';

/** Handles one job name. Handlers are collected at boot; a job name without one stops start-up. */
export interface JobHandler<Data = unknown, Result = unknown> {
  readonly jobName: string;
  /** `token` is the job's lock token, needed to hand the job back to the queue. */
  handle(job: Job<Data, Result>, token: string | undefined, signal: AbortSignal | undefined): Promise<Result>;
}

export const JOB_HANDLERS = Symbol('JOB_HANDLERS');
