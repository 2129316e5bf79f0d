import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { claimTokens, wakeFetchLoop } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { affinityQueueName, deploymentQueueName, type QueuedJobData } from '@conveyor/queue';
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
  /** The BullMQ workers taking each held deployment's jobs. */
  private readonly workers = new Map<string, Worker[]>();
  /** Jobs in hand by deployment, and when its last one ended: what tells an idle model to unload. */
  private readonly inHand = new Map<string, number>();
  private readonly lastUsed = new Map<string, number>();

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
    for (const deployment of this.deployments) if (deployment.load !== 'on-demand') this.serve(deployment);
    await this.presence.start();
    this.rescuer.start();
    if (this.config.worker.threadpoolSize === null) {
      // libuv reads it when its pool starts, before any of this code runs, so only the launcher can set it.
      this.logger.warn(
        "UV_THREADPOOL_SIZE is not set (libuv defaults to 4 threads): a token's decode and sampling may run on different threads. " +
          'Set it to the number of deployments this worker serves (npm run start:worker and the worker images set 1).',
      );
    }
    const onDemand = this.deployments.filter((d) => d.load === 'on-demand');
    this.logger.log(
      `Worker ready: ${this.identity.id} serving ${[...this.workers.keys()].map((id) => `"${id}"`).join(', ') || 'nothing yet'}` +
        (onDemand.length ? `; on demand: ${onDemand.map((d) => `"${d.id}"`).join(', ')}` : ''),
    );
  }

  /** Starts taking an on-demand deployment's jobs, its model loaded, and announces it. */
  async hold(deployment: DeploymentConfig): Promise<void> {
    this.serve(deployment);
    await this.presence.serve([...this.workers.keys()]);
  }

  /** Stops announcing and taking a deployment's jobs; resolves once the jobs in hand of it are done. */
  async release(deployment: string): Promise<void> {
    const workers = this.workers.get(deployment) ?? [];
    this.workers.delete(deployment);
    await this.presence.serve([...this.workers.keys()]);
    await Promise.all(workers.map((w) => w.close()));
  }

  /**
   * Fails the deployment's waiting jobs with `message` (503 `model_unavailable`) until the returned
   * function is called: its model could not be loaded, and they would otherwise wait for their timeout.
   */
  refuse(deployment: string, message: string): () => Promise<void> {
    const refusing = new Worker(
      deploymentQueueName(deployment),
      async (job: Job<QueuedJobData>) => {
        // Taken from the queue as the router takes a job: its place there is given back.
        this.router.taken(deployment, job);
        await this.unrun.refuse(job, 503, 'model_unavailable', message);
      },
      {
        connection: bullConnection(
          this.config.redis,
          `conveyor-worker-${deployment}-refusing`,
          'blocking',
          this.logger,
        ),
        prefix: this.config.redis.prefix,
        concurrency: 16,
        lockDuration: this.config.worker.lockMs,
        name: this.identity.id,
      },
    );
    refusing.on('error', (err) => this.logger.warn(`Worker ${refusing.name}: ${err.message}`));
    refusing.on('closed', () => releaseBullConnection(refusing.opts.connection));
    return () => refusing.close();
  }

  /** Since when no job of the deployment has been in hand; null while one is. */
  idleSince(deployment: string): number | null {
    return this.inHand.get(deployment) ? null : (this.lastUsed.get(deployment) ?? 0);
  }

  /** Counts a deployment's job in hand while `run` runs. */
  private async counted<T>(deployment: string, run: () => Promise<T>): Promise<T> {
    this.inHand.set(deployment, (this.inHand.get(deployment) ?? 0) + 1);
    try {
      return await run();
    } finally {
      this.inHand.set(deployment, (this.inHand.get(deployment) ?? 1) - 1);
      this.lastUsed.set(deployment, Date.now());
    }
  }

  /**
   * Takes a deployment's jobs: from its queue and, for a pinned one (which announces the prompts its
   * sequences hold), from this worker's own queue. An on-demand model comes and goes, so the API never
   * routes to it by prompt: a job left in an own queue would have nobody to take it.
   */
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
          return await this.counted(deployment.id, () => this.router.route(deployment.id, job, token, signal));
        } finally {
          gate.leaveShared();
        }
      },
      options(`conveyor-worker-${deployment.id}`),
    );
    claimTokens(shared, bullWorkerId(this.identity.instance, 'shared'));
    const gate = new SlotGate(deployment.parallel, intakeOf(shared), (free) => this.routes.free(deployment.id, free));
    const workers = [shared];
    if (deployment.load !== 'on-demand') workers.push(this.ownWorker(deployment, gate, options));
    for (const worker of workers) {
      worker.on('error', (err) => this.logger.warn(`Worker ${worker.name}: ${err.message}`));
      worker.on('closed', () => releaseBullConnection(worker.opts.connection));
      worker.on('failed', (job, err) => this.logger.warn(`Job ${job?.id} failed: ${err.message}`));
      this.unrun.watch(worker);
      // A worker that was frozen past its lock must stop: another worker has the job now.
      worker.on('lockRenewalFailed', (jobIds) => this.cancellation.stop(STOP.lostLock, jobIds));
      void worker.run();
    }
    this.workers.set(deployment.id, workers);
  }

  /** The worker on this worker's own queue of a deployment, sharing its sequences with the shared one through `gate`. */
  private ownWorker(deployment: DeploymentConfig, gate: SlotGate, options: (name: string) => WorkerOptions): Worker {
    const own = new Worker(
      affinityQueueName(deployment.id, this.identity.routeName),
      async (job: Job, token: string | undefined, signal: AbortSignal | undefined) => {
        // Routed here for its prompt, but every sequence is busy: any worker may take it sooner.
        if (!gate.enterRouted()) return this.forwarder.forward(job, 'no free sequence');
        try {
          return await this.counted(deployment.id, () => this.router.route(deployment.id, job, token, signal));
        } finally {
          gate.leaveRouted();
        }
      },
      options(`conveyor-worker-${deployment.id}-own`),
    );
    claimTokens(own, bullWorkerId(this.identity.instance, 'own'));
    return own;
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
    const closing = Promise.all([...this.workers.values()].flat().map((w) => w.close()));
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
