import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { join } from 'node:path';
import { FileStore, LocalFileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BatchRunner } from './batches/batch-runner.service.js';
import { BatchRepository } from './batches/batch.repository.js';
import { BatchesController } from './batches/batches.controller.js';
import { BatchesService } from './batches/batches.service.js';
import { FilesController } from './files/files.controller.js';
import { FilesService } from './files/files.service.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { ApiKeyStore } from './auth/api-key.store.js';
import { RateLimiter } from './auth/rate-limiter.service.js';
import { ChatHttpHandler } from './chat/chat-http.handler.js';
import { ChatController } from './chat/chat.controller.js';
import { ChatService } from './chat/chat.service.js';
import { EmbeddingsController } from './embeddings/embeddings.controller.js';
import { EmbeddingsHttpHandler } from './embeddings/embeddings-http.handler.js';
import { EmbeddingsService } from './embeddings/embeddings.service.js';
import { CompletionsController } from './completions/completions.controller.js';
import { CompletionsHttpHandler } from './completions/completions-http.handler.js';
import { CompletionsService } from './completions/completions.service.js';
import { OpenAiExceptionFilter } from './errors/openai-exception.filter.js';
import { OrgAppController } from './forms/org-app.controller.js';
import { PredictController } from './forms/predict.controller.js';
import { HealthController } from './health/health.controller.js';
import { DeploymentRegistry } from './models/deployment-registry.service.js';
import { ModelListService } from './models/model-list.service.js';
import { ModelsController } from './models/models.controller.js';
import { BullChatQueue } from './queue/bullmq-chat-queue.adapter.js';
import { ChatQueue } from './queue/chat-queue.port.js';
import { JobFailureWatcher } from './queue/job-failure.watcher.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { DocsController } from './docs/docs.controller.js';
import { PlatformMetrics } from './metrics/platform-metrics.service.js';
import { DrainService } from './platform/drain.service.js';
import { ReplyRelay } from './relay/reply-relay.service.js';
import { LiveWorkers } from './workers/live-workers.service.js';

@Module({})
export class AppModule {
  static forConfig(config: PlatformConfig): DynamicModule {
    return {
      module: AppModule,
      controllers: [HealthController, MetricsController, DocsController, ModelsController, ChatController, EmbeddingsController, CompletionsController, FilesController, BatchesController, PredictController, OrgAppController],
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: OpenAiExceptionFilter },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        BullChatQueue,
        { provide: ChatQueue, useExisting: BullChatQueue },
        ApiKeyStore,
        RateLimiter,
        DeploymentRegistry,
        ModelListService,
        LiveWorkers,
        ReplyRelay,
        ChatService,
        ChatHttpHandler,
        EmbeddingsService,
        EmbeddingsHttpHandler,
        CompletionsService,
        CompletionsHttpHandler,
        { provide: FileStore, useValue: new LocalFileStore(join(config.batch.dataDir, 'files')) },
        FilesService,
        BatchRepository,
        BatchesService,
        BatchRunner,
        JobFailureWatcher,
        DrainService,
        PlatformMetrics,
      ],
    };
  }
}
