import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ChatController } from './chat/chat.controller.js';
import { ChatService } from './chat/chat.service.js';
import { OpenAiExceptionFilter } from './errors/openai-exception.filter.js';
import { HealthController } from './health/health.controller.js';
import { DeploymentRegistry } from './models/deployment-registry.service.js';
import { ModelsController } from './models/models.controller.js';
import { BullChatQueue } from './queue/bullmq-chat-queue.adapter.js';
import { ChatQueue } from './queue/chat-queue.port.js';
import { ReplyRelay } from './relay/reply-relay.service.js';

@Module({})
export class AppModule {
  static forConfig(config: PlatformConfig): DynamicModule {
    return {
      module: AppModule,
      controllers: [HealthController, ModelsController, ChatController],
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: OpenAiExceptionFilter },
        { provide: ChatQueue, useClass: BullChatQueue },
        DeploymentRegistry,
        ReplyRelay,
        ChatService,
      ],
    };
  }
}
