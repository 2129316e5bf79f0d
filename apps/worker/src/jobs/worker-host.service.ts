import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { CHAT_JOB, chatQueueName } from '@conveyor/queue';
import { SERVED_DEPLOYMENT } from '../engine/chat-engine.token.js';
import { JOB_HANDLERS, type JobHandler } from './job-handler.js';
import { JobRouter } from './job-router.js';

/** Runs the BullMQ worker for the served deployment, once everything it needs is loaded. */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHost.name);
  private readonly router: JobRouter;
  private worker: Worker | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(SERVED_DEPLOYMENT) private readonly deployment: DeploymentConfig,
    @Inject(JOB_HANDLERS) handlers: JobHandler[],
  ) {
    this.router = new JobRouter(handlers, [CHAT_JOB]);
  }

  onApplicationBootstrap(): void {
    const queue = chatQueueName(this.deployment.id);
    // Three declared parameters: BullMQ only passes the AbortSignal to processors that take it.
    const processor = (job: Job, _token: string | undefined, signal: AbortSignal | undefined) => this.router.route(job, signal);
    this.worker = new Worker(queue, processor, {
      connection: { url: this.config.redis.url, maxRetriesPerRequest: null },
      prefix: this.config.redis.prefix,
      concurrency: this.deployment.parallel,
      // Recorded on each job as processedBy, so operators can tell which worker ran it.
      name: `${hostname()}:${process.pid}`,
      autorun: false,
    });
    this.worker.on('error', (err) => this.logger.warn(`Worker: ${err.message}`));
    this.worker.on('failed', (job, err) => this.logger.warn(`Job ${job?.id} failed: ${err.message}`));
    void this.worker.run();
    this.logger.log(`Worker ready: serving "${this.deployment.id}" from queue ${queue} (concurrency ${this.deployment.parallel})`);
  }

  /** Finishes the jobs in hand, takes no new ones. */
  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }
}
