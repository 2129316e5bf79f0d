/**
 * The generation pipeline wired by hand from its ports, as the API module wires it: for specs that build
 * a GenerationService over stand-ins or over real Redis.
 */
import type { PlatformConfig } from '@conveyor/config';
import type { TokenQuota } from '../../apps/api/src/auth/token-quota.service.js';
import type { JobQueue } from '../../apps/api/src/contracts/job-queue.port.js';
import type { ReplyRelay } from '../../apps/api/src/contracts/reply-relay.port.js';
import type { DeploymentRegistry } from '../../apps/api/src/deployments/deployment-registry.service.js';
import { FollowedJobs } from '../../apps/api/src/generation/followed-jobs.js';
import { GenerationService } from '../../apps/api/src/generation/generation.service.js';
import { JobRecall } from '../../apps/api/src/generation/job-recall.js';
import { JobRouting } from '../../apps/api/src/generation/job-routing.service.js';
import { JobSubmission } from '../../apps/api/src/generation/job-submission.service.js';
import { ReplyReading } from '../../apps/api/src/generation/reply-reading.js';
import { ReplyResumption } from '../../apps/api/src/generation/reply-resumption.js';
import { RequestAdmission } from '../../apps/api/src/generation/request-admission.js';
import type { PlatformMetrics } from '../../apps/api/src/metrics/platform-metrics.service.js';
import type { ImageStore } from '../../apps/api/src/repositories/image-store.port.js';
import type { LiveWorkers } from '../../apps/api/src/repositories/live-workers.port.js';
import type { QueueAdmission } from '../../apps/api/src/repositories/queue-admission.port.js';
import type { UsageLedger } from '../../apps/api/src/repositories/usage-ledger.port.js';
import type { WorkerRoutes } from '../../apps/api/src/repositories/worker-routes.port.js';
import { configuredKeys } from './api-key-fakes.js';

export interface PipelinePorts {
  config: PlatformConfig;
  registry: DeploymentRegistry;
  queue: JobQueue;
  relay: ReplyRelay;
  workers: LiveWorkers;
  metrics: PlatformMetrics;
  places: QueueAdmission;
  routes: WorkerRoutes;
  images: ImageStore;
  usage: UsageLedger;
  quota: TokenQuota;
}

/** The service and the parts a spec looks into: the jobs it follows, and what takes jobs back. */
export function generationPipeline(p: PipelinePorts) {
  const admission = new RequestAdmission(p.config, p.places, p.quota, configuredKeys(p.config));
  const followed = new FollowedJobs(p.queue);
  const recall = new JobRecall(p.config, p.queue, p.workers, p.images, admission, followed);
  const replies = new ReplyReading(p.config, p.metrics, p.usage, p.quota, followed, recall);
  const service = new GenerationService(
    p.config,
    p.registry,
    p.relay,
    admission,
    new JobSubmission(p.queue, new JobRouting(p.registry, p.routes, p.metrics), p.images),
    replies,
    new ReplyResumption(p.queue, p.relay, replies),
  );
  return { service, followed, recall };
}
