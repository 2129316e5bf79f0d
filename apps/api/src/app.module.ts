// The composition root: a table of every controller and provider, one per line, so it is one file past
// 300 lines. Modules made from the feature folders' own lists would shorten it; they are not built yet.
import { useHashTags } from '@conveyor/queue';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { FileStore, createFileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { CommandConnection } from '@conveyor/redis';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { ApiKeyStore } from './auth/api-key.store.js';
import { RateLimiter } from './auth/rate-limiter.service.js';
import { TokenQuota } from './auth/token-quota.service.js';
import { BatchInput } from './batches/batch-input.reader.js';
import { BatchEnding } from './batches/batch-ending.js';
import { BatchRunner } from './batches/batch-runner.service.js';
import { BatchPlans } from './batches/batch-plans.js';
import { BatchValidator } from './batches/batch-validator.js';
import { LineFeeder } from './batches/line-feeder.js';
import { LineShares } from './batches/line-shares.js';
import { LineRecovery } from './batches/line-recovery.js';
import { ResultWriter } from './batches/result-writer.js';
import { AdminBatchesController } from './batches/admin-batches.controller.js';
import { BatchesController } from './batches/batches.controller.js';
import { BatchesService } from './batches/batches.service.js';
import { MessageBatchesController } from './batches/message-batches.controller.js';
import { MessageBatchesService } from './batches/message-batches.service.js';
import { ChatHttpHandler } from './chat/chat-http.handler.js';
import { ChatController } from './chat/chat.controller.js';
import { ChatService } from './chat/chat.service.js';
import { CompletionsController } from './completions/completions.controller.js';
import { CompletionsHttpHandler } from './completions/completions-http.handler.js';
import { CompletionsService } from './completions/completions.service.js';
import { DocsController } from './docs/docs.controller.js';
import { OpenApiDocument } from './docs/openapi.document.js';
import { EmbeddingsController } from './embeddings/embeddings.controller.js';
import { EmbeddingsHttpHandler } from './embeddings/embeddings-http.handler.js';
import { EmbeddingsService } from './embeddings/embeddings.service.js';
import { RerankController } from './rerank/rerank.controller.js';
import { RerankService } from './rerank/rerank.service.js';
import { ScoreController } from './score/score.controller.js';
import { ScoreService } from './score/score.service.js';
import { ApiExceptionFilter } from './http/api-exception.filter.js';
import { FilesController } from './files/files.controller.js';
import { FilesService } from './files/files.service.js';
import { BackgroundResponses } from './responses/background-responses.js';
import { ResponsesController } from './responses/responses.controller.js';
import { ResponsesHttpHandler } from './responses/responses-http.handler.js';
import { ResponsesService } from './responses/responses.service.js';
import { ResponseOutcomes } from './responses/response-outcomes.service.js';
import { OrgAppController } from './hosted-routes/org-app.controller.js';
import { OrgAppMessagesController } from './hosted-routes/org-app-messages.controller.js';
import { OrgAppTokenizeController } from './hosted-routes/org-app-tokenize.controller.js';
import { PredictController } from './hosted-routes/predict.controller.js';
import { BATCH_ENDPOINTS, batchEndpointsOf } from './contracts/batch-endpoint.js';
import { SURFACES } from './surfaces.js';
import { BullMqJobQueue } from './generation/bullmq-job-queue.adapter.js';
import { FollowedJobs } from './generation/followed-jobs.js';
import { GenerationService } from './generation/generation.service.js';
import { JobRecall } from './generation/job-recall.js';
import { ReplyReading } from './generation/reply-reading.js';
import { ReplyResumption } from './generation/reply-resumption.js';
import { RequestAdmission } from './generation/request-admission.js';
import { HttpGeneration } from './generation/http-generation.js';
import { JobRouting } from './generation/job-routing.service.js';
import { JobSubmission } from './generation/job-submission.service.js';
import { JobQueue } from './contracts/job-queue.port.js';
import { RedisReplyRelay } from './generation/redis-reply-relay.adapter.js';
import { ReplyRelay } from './contracts/reply-relay.port.js';
import { TokenizeService } from './generation/tokenize.service.js';
import { HealthController } from './health/health.controller.js';
import { MessagesHttpHandler } from './messages/messages-http.handler.js';
import { MessagesController } from './messages/messages.controller.js';
import { MessagesService } from './messages/messages.service.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { PendingWorkGauge } from './metrics/pending-work.gauge.js';
import { PlatformMetrics } from './metrics/platform-metrics.service.js';
import { DeploymentRegistry } from './deployments/deployment-registry.service.js';
import { FleetController } from './fleet/fleet.controller.js';
import { FleetService } from './fleet/fleet.service.js';
import { ModelListService } from './models/model-list.service.js';
import { ModelsController } from './models/models.controller.js';
import { ScalingController } from './scaling/scaling.controller.js';
import { ScalingService } from './scaling/scaling.service.js';
import { DrainService } from './platform/drain.service.js';
import { FileStoreCheck } from './platform/file-store.check.js';
import { AdmissionRepository } from './repositories/admission.repository.js';
import { apiRedis } from './repositories/api-redis.js';
import { QueueAdmission } from './repositories/queue-admission.port.js';
import { BatchLineRepository } from './repositories/batch-line.repository.js';
import { BatchShareRepository } from './repositories/batch-share.repository.js';
import { BatchShares } from './repositories/batch-shares.port.js';
import { BatchLines } from './repositories/batch-lines.port.js';
import { BatchRecords } from './repositories/batch-records.port.js';
import { BatchRepository } from './repositories/batch.repository.js';
import { ImageRepository } from './repositories/image.repository.js';
import { ImageStore } from './repositories/image-store.port.js';
import { LiveWorkers } from './repositories/live-workers.port.js';
import { LiveWorkersRepository } from './repositories/live-workers.repository.js';
import { ModelLoadsRepository } from './repositories/model-loads.repository.js';
import { ModelLoads } from './repositories/model-loads.port.js';
import { ResponseRepository } from './repositories/response.repository.js';
import { ResponseStore } from './repositories/response-store.port.js';
import { ResponseLeaseRepository } from './repositories/response-lease.repository.js';
import { ResponseLeases } from './repositories/response-leases.port.js';
import { RateLimitRepository } from './repositories/rate-limit.repository.js';
import { RateLimits } from './repositories/rate-limits.port.js';
import { TokenQuotaRepository } from './repositories/token-quota.repository.js';
import { TokenQuotas } from './repositories/token-quotas.port.js';
import { StoreIdentityRepository } from './repositories/store-identity.repository.js';
import { PendingWork } from './repositories/pending-work.port.js';
import { PendingWorkRepository } from './repositories/pending-work.repository.js';
import { WorkerRoutesRepository } from './repositories/worker-routes.repository.js';
import { WorkerRoutes } from './repositories/worker-routes.port.js';
import { TokenizeController, TokenizeV1Controller } from './tokenize/tokenize.controller.js';
import { TokenizeHttpHandler } from './tokenize/tokenize-http.handler.js';
import { StoreIdentities } from './repositories/store-identities.port.js';
import { UnqueuedLines } from './repositories/unqueued-lines.port.js';
import { UnqueuedLinesRepository } from './repositories/unqueued-lines.repository.js';
import { FleetState } from './repositories/fleet-state.port.js';
import { FleetStateRepository } from './repositories/fleet-state.repository.js';
import { RedisServerStats } from './repositories/redis-server-stats.port.js';
import { RedisServerStatsRepository } from './repositories/redis-server-stats.repository.js';
import { UsageLedger } from './repositories/usage-ledger.port.js';
import { UsageRepository } from './repositories/usage.repository.js';
import { FleetGauges } from './metrics/fleet.gauges.js';
import { UsageController } from './usage/usage.controller.js';
import { OwnUsageController } from './usage/own-usage.controller.js';
import { ConsoleController } from './console/console.controller.js';
import { ApiKeysController } from './keys/api-keys.controller.js';
import { ApiKeysService } from './keys/api-keys.service.js';
import { ApiKeys } from './repositories/api-keys.port.js';
import { ApiKeyRepository } from './repositories/api-key.repository.js';
import { UsageService } from './usage/usage.service.js';
import { UsageRollUp } from './usage/usage-roll-up.service.js';
import { BatchEvents } from './webhooks/batch-events.service.js';
import { OutputExpiry } from './batches/output-expiry.js';
import { FileExpirySweeper } from './files/file-expiry-sweeper.service.js';
import { FileExpiries } from './repositories/file-expiries.port.js';
import { FileExpiryRepository } from './repositories/file-expiry.repository.js';
import { BullMqWebhookOutbox } from './webhooks/bullmq-webhook-outbox.adapter.js';
import { WebhookOutbox } from './webhooks/webhook-outbox.port.js';
import { WebhookSender } from './webhooks/webhook-sender.js';

/** The routes batches may run, read from the surfaces that declare them. */
const BATCH_DIALECTS = batchEndpointsOf(SURFACES);

/**
 * The composition root: features (chat, completions, responses, embeddings, Anthropic's messages,
 * vLLM's tokenize, batches, files, models and the hosted forms) over the shared generation pipeline,
 * with every Redis and BullMQ call in a repository or adapter.
 */
@Module({})
export class AppModule {
  static forConfig(config: PlatformConfig): DynamicModule {
    // Before any key is named: keys carry hash tags on a Redis Cluster only.
    useHashTags(config.redis.cluster !== null);
    return {
      module: AppModule,
      controllers: [
        HealthController,
        MetricsController,
        ScalingController,
        DocsController,
        ModelsController,
        FleetController,
        ChatController,
        EmbeddingsController,
        RerankController,
        ScoreController,
        CompletionsController,
        ResponsesController,
        MessagesController,
        TokenizeController,
        TokenizeV1Controller,
        FilesController,
        BatchesController,
        AdminBatchesController,
        MessageBatchesController,
        PredictController,
        OrgAppController,
        OrgAppMessagesController,
        UsageController,
        OwnUsageController,
        ConsoleController,
        ApiKeysController,
        OrgAppTokenizeController,
      ],
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        // Repositories and adapters: the only providers that use Redis, sharing its one command connection.
        { provide: CommandConnection, useFactory: () => apiRedis(config) },
        AdmissionRepository,
        { provide: QueueAdmission, useExisting: AdmissionRepository },
        BatchRepository,
        { provide: BatchRecords, useExisting: BatchRepository },
        BatchLineRepository,
        { provide: BatchLines, useExisting: BatchLineRepository },
        BatchShareRepository,
        { provide: BatchShares, useExisting: BatchShareRepository },
        LiveWorkersRepository,
        { provide: LiveWorkers, useExisting: LiveWorkersRepository },
        ModelLoadsRepository,
        { provide: ModelLoads, useExisting: ModelLoadsRepository },
        RateLimitRepository,
        { provide: RateLimits, useExisting: RateLimitRepository },
        TokenQuotaRepository,
        { provide: TokenQuotas, useExisting: TokenQuotaRepository },
        ResponseRepository,
        { provide: ResponseStore, useExisting: ResponseRepository },
        ResponseLeaseRepository,
        { provide: ResponseLeases, useExisting: ResponseLeaseRepository },
        StoreIdentityRepository,
        { provide: StoreIdentities, useExisting: StoreIdentityRepository },
        WorkerRoutesRepository,
        { provide: WorkerRoutes, useExisting: WorkerRoutesRepository },
        ImageRepository,
        { provide: ImageStore, useExisting: ImageRepository },
        UnqueuedLinesRepository,
        { provide: UnqueuedLines, useExisting: UnqueuedLinesRepository },
        PendingWorkRepository,
        { provide: PendingWork, useExisting: PendingWorkRepository },
        FleetStateRepository,
        { provide: FleetState, useExisting: FleetStateRepository },
        RedisServerStatsRepository,
        { provide: RedisServerStats, useExisting: RedisServerStatsRepository },
        UsageRepository,
        { provide: UsageLedger, useExisting: UsageRepository },
        ApiKeyRepository,
        { provide: ApiKeys, useExisting: ApiKeyRepository },
        FileStoreCheck,
        BullMqJobQueue,
        { provide: JobQueue, useExisting: BullMqJobQueue },
        FileExpiryRepository,
        { provide: FileExpiries, useExisting: FileExpiryRepository },
        BullMqWebhookOutbox,
        { provide: WebhookOutbox, useExisting: BullMqWebhookOutbox },
        RedisReplyRelay,
        { provide: ReplyRelay, useExisting: RedisReplyRelay },
        // Local disk, or S3-compatible storage that every replica shares (FILE_STORE).
        { provide: FileStore, useFactory: () => createFileStore(config.fileStore) },
        // The generation pipeline and the features over it.
        GenerationService,
        RequestAdmission,
        FollowedJobs,
        JobRecall,
        ReplyReading,
        ReplyResumption,
        HttpGeneration,
        JobRouting,
        JobSubmission,
        ChatService,
        ChatHttpHandler,
        CompletionsService,
        CompletionsHttpHandler,
        EmbeddingsService,
        RerankService,
        ScoreService,
        EmbeddingsHttpHandler,
        ResponsesService,
        ResponseOutcomes,
        ResponsesHttpHandler,
        BackgroundResponses,
        TokenizeService,
        MessagesService,
        MessagesHttpHandler,
        TokenizeHttpHandler,
        { provide: BATCH_ENDPOINTS, useValue: BATCH_DIALECTS },
        BatchesService,
        MessageBatchesService,
        BatchInput,
        BatchPlans,
        BatchValidator,
        LineFeeder,
        LineShares,
        ResultWriter,
        LineRecovery,
        BatchEnding,
        BatchRunner,
        BatchEvents,
        OutputExpiry,
        FileExpirySweeper,
        UsageRollUp,
        WebhookSender,
        FilesService,
        ApiKeyStore,
        RateLimiter,
        TokenQuota,
        DeploymentRegistry,
        ModelListService,
        FleetService,
        ScalingService,
        DrainService,
        PlatformMetrics,
        PendingWorkGauge,
        FleetGauges,
        UsageService,
        ApiKeysService,
        OpenApiDocument,
      ],
    };
  }
}
