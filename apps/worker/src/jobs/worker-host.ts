import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { claimTokens, wakeFetchLoop } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { affinityQueueName, deploymentQueueName } from '@conveyor/queue';
import { MAX_RECONNECT_DELAY_MS, bullConnection, releaseBullConnection } from '@conveyor/redis';
import { bullMqTelemetry } from '@conveyor/telemetry';
import { SERVED_DEPLOYMENTS } from '../engine/served-deployments.token.js';
import { CancellationTracker, STOP } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { WORKER_IDENTITY, bullWorkerId, type WorkerIdentity } from '../presence/worker-identity.js';
import { WorkerPresence } from '../presence/worker-presence.js';
import { RedisPrefixRoutes } from '../routing/redis-prefix-routes.js';
import { AffinityRescuer } from './affinity-rescuer.js';
import { JobForwarder } from './job-forwarder.js';
import { JobRouter } from './job-router.js';
import { SlotGate, type SharedIntake } from './slot-gate.js';
import { UnrunFailures } from './unrun-failures.js';

/**
 * Runs two BullMQ workers per served deployment once the models are loaded, then announces itself:
 * one on the deployment's queue, which every worker takes from, and one on this worker's own queue,
 * which holds the jobs the API routed here because this worker's sequences hold their prompt's
 * beginning. A slot gate shares the deployment's sequences between the two.
 */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHost.name);
  private readonly workers: Worker[] = [];

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(SERVED_DEPLOYMENTS) private readonly deployments: DeploymentConfig[],
    @Inject(WORKER_IDENTITY) private readonly identity: WorkerIdentity,
    private readonly engines: EngineRegistry,
    private readonly cancellation: CancellationTracker,
    private readonly routes: RedisPrefixRoutes,
    private readonly unrun: UnrunFailures,
    private readonly router: JobRouter,
    private readonly presence: WorkerPresence,
    private readonly forwarder: JobForwarder,
    private readonly rescuer: AffinityRescuer,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Registered before taking from it, so a job routed here is always found by whoever looks for it.
    await this.routes.start();
    for (const deployment of this.deployments) this.serve(deployment);
    await this.presence.start();
    this.rescuer.start();
    if (this.config.worker.threadpoolSize === null) {
      // libuv reads it when its pool starts, before any of this code runs, so only the launcher can set it.
      this.logger.warn(
        "UV_THREADPOOL_SIZE is not set (libuv defaults to 4 threads): a token's decode and sampling may run on different threads. " +
          'Set it to the number of deployments this worker serves (npm run start:worker and the worker images set 1).',
      );
    }
    this.logger.log(
      `Worker ready: ${this.identity.id} serving ${this.deployments.map((d) => `"${d.id}" (concurrency ${d.parallel})`).join(', ')}`,
    );
  }

  private serve(deployment: DeploymentConfig): void {
    const options = (name: string): WorkerOptions => ({
      connection: bullConnection(this.config.redis, name, 'blocking', this.logger),
      prefix: this.config.redis.prefix,
      concurrency: deployment.parallel,
      lockDuration: this.config.worker.lockMs,
      stalledInterval: this.config.worker.stalledIntervalMs,
      maxStalledCount: this.config.worker.maxStalls,
      // Recorded on each job as processedBy, so operators can tell which worker ran it.
      name: this.identity.id,
      autorun: false,
      // BullMQ waits 15 s after a failed fetch by default: after an outage, service would resume that late.
      runRetryDelay: MAX_RECONNECT_DELAY_MS,
      // Each job's processing a consumer span continuing the producer span its enqueuing made.
      ...bullMqTelemetry(),
    });
    // Three declared parameters: BullMQ only passes the AbortSignal to processors that take it.
    const shared = new Worker(
      deploymentQueueName(deployment.id),
      async (job: Job, token: string | undefined, signal: AbortSignal | undefined) => {
        gate.enterShared();
        try {
          return await this.router.route(deployment.id, job, token, signal);
        } finally {
          gate.leaveShared();
        }
      },
      options(`conveyor-worker-${deployment.id}`),
    );
    claimTokens(shared, bullWorkerId(this.identity.instance, 'shared'));
    const gate = new SlotGate(deployment.parallel, intakeOf(shared), (free) => this.routes.free(deployment.id, free));
    const own = new Worker(
      affinityQueueName(deployment.id, this.identity.routeName),
      async (job: Job, token: string | undefined, signal: AbortSignal | undefined) => {
        // Routed here for its prompt, but every sequence is busy: any worker may take it sooner.
        if (!gate.enterRouted()) return this.forwarder.forward(job, 'no free sequence');
        try {
          return await this.router.route(deployment.id, job, token, signal);
        } finally {
          gate.leaveRouted();
        }
      },
      options(`conveyor-worker-${deployment.id}-own`),
    );
    claimTokens(own, bullWorkerId(this.identity.instance, 'own'));
    for (const worker of [shared, own]) {
      worker.on('error', (err) => this.logger.warn(`Worker ${worker.name}: ${err.message}`));
      worker.on('closed', () => releaseBullConnection(worker.opts.connection));
      worker.on('failed', (job, err) => this.logger.warn(`Job ${job?.id} failed: ${err.message}`));
      this.unrun.watch(worker);
      // A worker that was frozen past its lock must stop: another worker has the job now.
      worker.on('lockRenewalFailed', (jobIds) => this.cancellation.stop(STOP.lostLock, jobIds));
      void worker.run();
      this.workers.push(worker);
    }
  }

  /**
   * Stops announcing at once and takes no new jobs; jobs in hand may finish
   * within the grace period, after which they are handed back to the queue
   * for another worker to continue. The heartbeat goes on until then, so no
   * other worker takes a job over while it is still running here. Then frees the models.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.presence.withdraw();
    await this.rescuer.stop();
    const closing = Promise.all(this.workers.map((w) => w.close()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>(
      (r) => (timer = setTimeout(() => r('grace-over'), this.config.worker.shutdownGraceMs)),
    );
    if ((await Promise.race([closing, graceOver])) === 'grace-over') {
      this.logger.warn('Shutdown grace period over: handing the jobs in hand back to the queue');
      this.cancellation.stop(STOP.shutdown);
      await closing;
    }
    clearTimeout(timer);
    await this.presence.stop();
    await this.forwarder.close();
    await this.engines.dispose();
  }
}

/**
 * A BullMQ worker as the slot gate steers it. Raising `concurrency` alone takes effect only when one
 * of the worker's jobs ends; waking its fetch loop makes it take a job at once.
 */
function intakeOf(worker: Worker): SharedIntake {
  return {
    get concurrency() {
      return worker.concurrency;
    },
    set concurrency(value: number) {
      worker.concurrency = value;
    },
    wake: () => wakeFetchLoop(worker),
  };
}
