import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { CHAT_JOB, EMBED_JOB, chatQueueName } from '@conveyor/queue';
import { Redis } from 'ioredis';
import { SERVED_DEPLOYMENTS } from '../engine/served-deployments.token.js';
import { CancellationService, STOP } from '../cancel/cancellation.service.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { WorkerPresence } from '../presence/worker-presence.js';
import { JOB_HANDLERS, type JobHandler } from './job-handler.js';
import { JobRouter } from './job-router.js';

/** Runs one BullMQ worker per served deployment once the models are loaded, then announces itself. */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHost.name);
  private readonly router: JobRouter;
  private readonly workerId = `${hostname()}:${process.pid}`;
  private readonly workers: Worker[] = [];
  private readonly redis: Redis;
  private readonly presence: WorkerPresence;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(SERVED_DEPLOYMENTS) private readonly deployments: DeploymentConfig[],
    @Inject(JOB_HANDLERS) handlers: JobHandler[],
    private readonly engines: EngineRegistry,
    private readonly cancellation: CancellationService,
  ) {
    this.router = new JobRouter(handlers, [CHAT_JOB, EMBED_JOB]);
    this.redis = new Redis(config.redis.url, { connectionName: 'conveyor-worker-presence' });
    this.presence = new WorkerPresence(this.redis, config.redis.prefix, this.workerId, deployments.map((d) => d.id), config.worker.heartbeatMs);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Three declared parameters: BullMQ only passes the AbortSignal to processors that take it.
    const processor = (job: Job, token: string | undefined, signal: AbortSignal | undefined) => this.router.route(job, token, signal);
    for (const deployment of this.deployments) {
      const worker = new Worker(chatQueueName(deployment.id), processor, {
        connection: { url: this.config.redis.url, maxRetriesPerRequest: null },
        prefix: this.config.redis.prefix,
        concurrency: deployment.parallel,
        lockDuration: this.config.worker.lockMs,
        stalledInterval: this.config.worker.stalledIntervalMs,
        maxStalledCount: this.config.worker.maxStalls,
        // Recorded on each job as processedBy, so operators can tell which worker ran it.
        name: this.workerId,
        autorun: false,
      });
      worker.on('error', (err) => this.logger.warn(`Worker ${deployment.id}: ${err.message}`));
      worker.on('failed', (job, err) => this.logger.warn(`Job ${job?.id} failed: ${err.message}`));
      // A worker that was frozen past its lock must stop: another worker has the job now.
      worker.on('lockRenewalFailed', (jobIds) => this.cancellation.stop(STOP.lostLock, jobIds));
      void worker.run();
      this.workers.push(worker);
    }
    await this.presence.start();
    if (!process.env.UV_THREADPOOL_SIZE) {
      // libuv reads it when its pool starts, before any of this code runs, so only the launcher can set it.
      this.logger.warn(
        'UV_THREADPOOL_SIZE is not set (libuv defaults to 4 threads): a token\'s decode and sampling may run on different threads. ' +
          'Set it to the number of deployments this worker serves (npm run start:worker and the worker images set 1).',
      );
    }
    this.logger.log(`Worker ready: ${this.workerId} serving ${this.deployments.map((d) => `"${d.id}" (concurrency ${d.parallel})`).join(', ')}`);
  }

  /**
   * Stops announcing at once and takes no new jobs; jobs in hand may finish
   * within the grace period, after which they are handed back to the queue
   * for another worker to continue. Then frees the models.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.presence.stop();
    const closing = Promise.all(this.workers.map((w) => w.close()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>((r) => (timer = setTimeout(() => r('grace-over'), this.config.worker.shutdownGraceMs)));
    if ((await Promise.race([closing, graceOver])) === 'grace-over') {
      this.logger.warn('Shutdown grace period over: handing the jobs in hand back to the queue');
      this.cancellation.stop(STOP.shutdown);
      await closing;
    }
    clearTimeout(timer);
    await this.engines.dispose();
    this.redis.disconnect();
  }
}
