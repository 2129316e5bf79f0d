import { Injectable } from '@nestjs/common';
import type { ChatCompletion } from '@conveyor/openai';
import type { ChatCompletionRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService, type RequestContext } from '../generation/generation.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { toChatCompletion } from './chat-response.mapper.js';
import { openAiChat } from './openai-chat.dialect.js';

/** The chat use case: check the body against its deployment, queue its job, follow the reply. */
@Injectable()
export class ChatService {
  constructor(private readonly generation: GenerationService) {}

  /**
   * Enqueues the request for its caller, who alone may resume its reply; nothing is enqueued when it is
   * refused. The one way in of every generating surface (GenerationService.start), as openAiChat declares it.
   */
  start(dto: ChatCompletionRequestDto, request: RequestContext): Promise<ReplyRun> {
    return this.generation.start(openAiChat, dto, request);
  }

  /** A non-streamed reply: the same event path, gathered. */
  async complete(run: ReplyRun): Promise<ChatCompletion> {
    return toChatCompletion(run.who, await collectReply(run));
  }

  /** Follows a streamed reply already under way, on this replica or another, for the caller that made it. */
  resume(completionId: string, caller: string, signal: AbortSignal): Promise<ReplyRun> {
    return this.generation.resume(completionId, openAiChat, caller, signal);
  }
}
