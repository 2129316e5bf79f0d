import { DynamicModule, Module } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { BatchResultSink } from './batch/batch-result.sink.js';
import { CancellationService } from './cancel/cancellation.service.js';
import { ChatProcessor } from './chat/chat.processor.js';
import { EmbedProcessor } from './embed/embed.processor.js';
import { SERVED_DEPLOYMENTS } from './engine/served-deployments.token.js';
import { EngineRegistry } from './engine/engine-registry.js';
import { JOB_HANDLERS } from './jobs/job-handler.js';
import { WorkerHost } from './jobs/worker-host.service.js';
import { ReplyPublisherFactory } from './reply/reply-publisher.factory.js';

@Module({})
export class WorkerModule {
  static forDeployments(config: PlatformConfig, deployments: DeploymentConfig[]): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        { provide: SERVED_DEPLOYMENTS, useValue: deployments },
        { provide: EngineRegistry, useFactory: () => EngineRegistry.load(config, deployments) },
        ReplyPublisherFactory,
        CancellationService,
        BatchResultSink,
        ChatProcessor,
        EmbedProcessor,
        { provide: JOB_HANDLERS, inject: [ChatProcessor, EmbedProcessor], useFactory: (chat: ChatProcessor, embed: EmbedProcessor) => [chat, embed] },
        WorkerHost,
      ],
    };
  }
}
