import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { checkGeneration, type ChatCompletionRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService } from '../generation/generation.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { toChatCompletion } from './chat-response.mapper.js';
import { openAiChat } from './openai-chat.dialect.js';

/** The chat use case: check the body against its deployment, queue its job, follow the reply. */
@Injectable()
export class ChatService {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly generation: GenerationService,
  ) {}

  /**
   * Enqueues the request for `caller` (the API key's name), who alone may resume its reply; nothing is
   * enqueued when it is refused. `only` binds it to one deployment (an org/app route); `deadlineMs` is
   * the deadline the request's headers set.
   */
  start(
    dto: ChatCompletionRequestDto,
    caller: string,
    signal: AbortSignal,
    only?: DeploymentConfig,
    deadlineMs: number | null = null,
  ): Promise<ReplyRun> {
    const deployment = this.generation.deploymentFor(dto.model, only);
    const checked = checkGeneration(dto, deployment, this.config.api.images);
    return this.generation.submit(deployment, (requestId, now) => checked.toJob(requestId, now), signal, {
      idPrefix: openAiChat.idPrefix,
      route: '/v1/chat/completions',
      model: dto.model,
      stream: dto.stream === true,
      prompt: dto.messages,
      caller,
      images: checked.images(),
      asked: { tier: dto.service_tier, deadlineMs },
    });
  }

  /** A non-streamed reply: the same event path, gathered. */
  async complete(run: ReplyRun): Promise<ChatCompletion> {
    return toChatCompletion(run.who, await collectReply(run));
  }

  /** Follows a streamed reply already under way, on this replica or another, for the caller that made it. */
  resume(completionId: string, caller: string, signal: AbortSignal): Promise<ReplyRun> {
    return this.generation.resume(
      completionId,
      { idPrefix: openAiChat.idPrefix, route: '/v1/chat/completions' },
      caller,
      signal,
    );
  }
}
