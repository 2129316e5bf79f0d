import type { Job } from 'bullmq';

/** Handles one job name. Handlers are collected at boot; a job name without one stops start-up. */
export interface JobHandler<Data = unknown, Result = unknown> {
  readonly jobName: string;
  handle(job: Job<Data, Result>, signal: AbortSignal | undefined): Promise<Result>;
}

export const JOB_HANDLERS = Symbol('JOB_HANDLERS');
