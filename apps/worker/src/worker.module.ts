import { EMBED_JOB, GENERATE_JOB, TOKENIZE_JOB, useHashTags } from '@conveyor/queue';
import { DynamicModule, Module } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { CommandConnection } from '@conveyor/redis';
import { ImageSource } from '@conveyor/engine';
import { AdmissionPlaces } from './admission/admission-places.port.js';
import { RedisAdmissionPlaces } from './admission/redis-admission-places.js';
import { BatchResultSink } from './batch/batch-result-sink.port.js';
import { RedisBatchResultSink } from './batch/redis-batch-result.sink.js';
import { CancellationTracker } from './cancel/cancellation-tracker.port.js';
import { RedisCancellationTracker } from './cancel/redis-cancellation.tracker.js';
import { GenerationProcessor } from './generation/generation.processor.js';
import { ImageReleaser } from './images/image-releaser.port.js';
import { RedisImageReleaser } from './images/redis-image.releaser.js';
import { EmbedProcessor } from './embed/embed.processor.js';
import { TokenizeProcessor } from './tokenize/tokenize.processor.js';
import { SERVED_DEPLOYMENTS } from './engine/served-deployments.token.js';
import { EngineRegistry } from './engine/engine-registry.js';
import { RedisImageSource } from './images/redis-image.source.js';
import { WorkerMetricsServer } from './metrics/worker-metrics.server.js';
import { AffinityRescuer } from './jobs/affinity-rescuer.js';
import { DeadWorkerTakeover } from './jobs/dead-worker-takeover.js';
import { JobForwarder } from './jobs/job-forwarder.js';
import { JOB_HANDLERS, type JobHandler } from './jobs/job-handler.js';
import { JobRouter } from './jobs/job-router.js';
import { UnrunFailures } from './jobs/unrun-failures.js';
import { WorkerHost } from './jobs/worker-host.js';
import { ModelDemand } from './jobs/model-demand.port.js';
import { OnDemandModels } from './jobs/on-demand-models.js';
import { RedisModelDemand } from './jobs/redis-model-demand.js';
import { RedisReplyOutbox } from './reply/redis-reply.outbox.js';
import { ReplyStreams } from './reply/reply-streams.port.js';
import { ReplySinks } from './jobs/reply-sinks.js';
import { WORKER_IDENTITY, workerIdentity, type WorkerIdentity } from './presence/worker-identity.js';
import { WorkerPresence } from './presence/worker-presence.js';
import { PrefixRoutes } from './routing/prefix-routes.port.js';
import { RedisPrefixRoutes } from './routing/redis-prefix-routes.js';
import { workerRedis } from './worker-redis.js';

@Module({})
export class WorkerModule {
  static forDeployments(config: PlatformConfig, deployments: DeploymentConfig[]): DynamicModule {
    // Before any key is named: keys carry hash tags on a Redis Cluster only.
    useHashTags(config.redis.cluster !== null);
    const served = deployments.map((d) => d.id);
    return {
      module: WorkerModule,
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        { provide: SERVED_DEPLOYMENTS, useValue: deployments },
        { provide: WORKER_IDENTITY, useValue: workerIdentity() },
        // Adapters: what the job handlers and engines reach Redis through, on the worker's one command connection.
        { provide: CommandConnection, useFactory: () => workerRedis(config) },
        RedisImageSource,
        { provide: ImageSource, useExisting: RedisImageSource },
        {
          provide: EngineRegistry,
          inject: [ImageSource],
          useFactory: (images: ImageSource) => EngineRegistry.load(config, deployments, images),
        },
        RedisReplyOutbox,
        { provide: ReplyStreams, useExisting: RedisReplyOutbox },
        RedisCancellationTracker,
        { provide: CancellationTracker, useExisting: RedisCancellationTracker },
        RedisBatchResultSink,
        { provide: BatchResultSink, useExisting: RedisBatchResultSink },
        RedisPrefixRoutes,
        { provide: PrefixRoutes, useExisting: RedisPrefixRoutes },
        RedisImageReleaser,
        { provide: ImageReleaser, useExisting: RedisImageReleaser },
        RedisAdmissionPlaces,
        { provide: AdmissionPlaces, useExisting: RedisAdmissionPlaces },
        ReplySinks,
        GenerationProcessor,
        EmbedProcessor,
        TokenizeProcessor,
        {
          provide: JOB_HANDLERS,
          inject: [GenerationProcessor, EmbedProcessor, TokenizeProcessor],
          useFactory: (generate: GenerationProcessor, embed: EmbedProcessor, tokenize: TokenizeProcessor) => [
            generate,
            embed,
            tokenize,
          ],
        },
        UnrunFailures,
        // The parts the worker host runs, wired here rather than built by it.
        {
          provide: JobRouter,
          inject: [JOB_HANDLERS, AdmissionPlaces],
          useFactory: (handlers: JobHandler[], places: AdmissionPlaces) =>
            new JobRouter(handlers, [GENERATE_JOB, EMBED_JOB, TOKENIZE_JOB], places),
        },
        {
          provide: WorkerPresence,
          inject: [WORKER_IDENTITY],
          useFactory: (identity: WorkerIdentity) =>
            new WorkerPresence(config.redis, {
              prefix: config.redis.prefix,
              workerId: identity.id,
              instance: identity.instance,
              // On-demand models are announced as they load (WorkerHost.hold).
              deployments: deployments.filter((d) => d.load !== 'on-demand').map((d) => d.id),
              heartbeatMs: config.worker.heartbeatMs,
            }),
        },
        {
          provide: JobForwarder,
          inject: [CommandConnection],
          useFactory: ({ redis }: CommandConnection) => new JobForwarder(config, redis),
        },
        {
          provide: DeadWorkerTakeover,
          inject: [CommandConnection, WORKER_IDENTITY, AdmissionPlaces],
          useFactory: ({ redis }: CommandConnection, identity: WorkerIdentity, places: AdmissionPlaces) =>
            new DeadWorkerTakeover(redis, config, served, identity.instance, places),
        },
        {
          provide: AffinityRescuer,
          inject: [CommandConnection, WORKER_IDENTITY, JobForwarder, DeadWorkerTakeover],
          useFactory: (
            { redis }: CommandConnection,
            identity: WorkerIdentity,
            forwarder: JobForwarder,
            takeover: DeadWorkerTakeover,
          ) => new AffinityRescuer(config, served, identity.routeName, forwarder, redis, takeover),
        },
        WorkerHost,
        RedisModelDemand,
        { provide: ModelDemand, useExisting: RedisModelDemand },
        OnDemandModels,
        WorkerMetricsServer,
      ],
    };
  }
}
