import type { Job } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import type { JobHandler } from './job-handler.js';

/** Routes a job to its handler by name; checked for completeness once, at boot. */
export class JobRouter {
  private readonly byName: Map<string, JobHandler>;

  constructor(handlers: readonly JobHandler[], required: readonly string[]) {
    this.byName = new Map(handlers.map((h) => [h.jobName, h]));
    const missing = required.filter((name) => !this.byName.has(name));
    if (missing.length) throw new Error(`No handler registered for job name(s): ${missing.join(', ')}`);
  }

  route(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<unknown> {
    const handler = this.byName.get(job.name);
    // A job no handler knows will never succeed here: fail it now rather than retrying.
    if (!handler) throw new UnrecoverableError(`Unknown job name "${job.name}"`);
    return handler.handle(job, token, signal);
  }
}
