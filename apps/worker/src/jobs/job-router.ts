import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { isBatchLinePriority } from '@conveyor/queue';
import type { AdmissionPlaces } from '../admission/admission-places.port.js';
import type { JobHandler } from './job-handler.js';

/**
 * Takes a job this worker starts: gives its request's place in the queue back, then routes it to its
 * handler by name. The handlers are checked for completeness once, at boot.
 */
export class JobRouter {
  private readonly logger = new Logger(JobRouter.name);
  private readonly byName: Map<string, JobHandler>;

  constructor(
    handlers: readonly JobHandler[],
    required: readonly string[],
    private readonly places: AdmissionPlaces,
  ) {
    this.byName = new Map(handlers.map((h) => [h.jobName, h]));
    const missing = required.filter((name) => !this.byName.has(name));
    if (missing.length) throw new Error(`No handler registered for job name(s): ${missing.join(', ')}`);
  }

  route(deployment: string, job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<unknown> {
    this.taken(deployment, job);
    const handler = this.byName.get(job.name);
    // A job no handler knows will never succeed here: fail it now rather than retrying.
    if (!handler) throw new UnrecoverableError(`Unknown job name "${job.name}"`);
    return handler.handle(job, token, signal);
  }

  /**
   * The job's request waits no more: its place in the queue is given back, without holding up the job (a
   * place not given back lapses). Batch lines are not admitted, so hold none; requests of every service
   * tier are, whatever BullMQ priority their tier gave them.
   */
  taken(deployment: string, job: Job): void {
    if (isBatchLinePriority(job.opts.priority) || !job.id) return;
    this.places.taken(deployment, job.id).catch((err: Error) => {
      this.logger.warn(`Could not give back the queue place of ${job.id}: ${err.message}`);
    });
  }
}
