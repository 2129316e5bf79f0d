import { Injectable, Logger } from '@nestjs/common';
import { MIN_ROUTED_BLOCKS, isGenerationJob, promptBlockHashes, type QueuedJobData } from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { WorkerRoutes } from '../repositories/worker-routes.port.js';

/**
 * Cache-aware routing: a job whose prompt begins with what a live worker's sequences hold (the
 * conversation so far, a batch's shared instructions) goes to that worker's own queue, where the
 * worker reuses those cells instead of computing them again. Only to a worker with a free sequence:
 * a saturated one would make the job wait, so it goes to the deployment's queue like any other,
 * as does everything when routing cannot be decided.
 */
@Injectable()
export class JobRouting {
  private readonly logger = new Logger(JobRouting.name);

  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly routes: WorkerRoutes,
    private readonly metrics: PlatformMetrics,
  ) {}

  /** The worker (its route name) whose queue should take the job, or null for the deployment's queue. */
  async target(job: QueuedJobData): Promise<string | null> {
    const cache = this.registry.all.find((d) => d.id === job.deployment)?.promptCache ?? 'off';
    if (!isGenerationJob(job) || cache === 'off') return null;
    const blocks = promptBlockHashes(job);
    if (blocks.length < MIN_ROUTED_BLOCKS) return null;
    try {
      const pick = await this.routes.pick(job.deployment, blocks, MIN_ROUTED_BLOCKS);
      this.metrics.prefixRoutes.inc({ deployment: job.deployment, outcome: pick.outcome });
      return pick.outcome === 'hit' ? pick.worker : null;
    } catch (err) {
      // Routing only saves work; a job it cannot place goes where it always could.
      this.logger.debug(`Routing ${job.requestId} failed: ${(err as Error).message}`);
      return null;
    }
  }
}
