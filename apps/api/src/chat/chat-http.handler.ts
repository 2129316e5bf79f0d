import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { ChatCompletionRequestDto } from '@conveyor/protocol';
import { abortOnDisconnect } from '../generation/abort-on-disconnect.js';
import { parseRequest } from '../generation/parse-request.js';
import { finishReasonsOf, type ReplyRun } from '../generation/reply-run.js';
import { streamReply } from '../generation/reply-stream.js';
import { DrainService } from '../platform/drain.service.js';
import { ChunkFormatter } from './chat-response.mapper.js';
import { ChatService, COMPLETION_ID_PREFIX } from './chat.service.js';

/**
 * The HTTP shape of a chat reply, shared by every route that takes the chat
 * body: a JSON chat.completion, or Server-Sent Events when `stream` is true.
 */
@Injectable()
export class ChatHttpHandler {
  constructor(
    private readonly chat: ChatService,
    private readonly drain: DrainService,
  ) {}

  /** `caller`: the name of the API key the request came with; its reply is that key's alone. */
  async handle(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<ChatCompletion | void> {
    this.drain.assertAccepting();
    const dto = parseRequest(ChatCompletionRequestDto, body);
    const signal = abortOnDisconnect(reply);
    if (!dto.stream) {
      const completion = await this.chat.complete(dto, caller, signal, onlyDeployment);
      reply.header('x-request-id', completion.id.slice(COMPLETION_ID_PREFIX.length));
      return completion;
    }
    const run = await this.chat.start(dto, caller, signal, onlyDeployment);
    reply.header('x-request-id', run.who.id.slice(COMPLETION_ID_PREFIX.length));
    return this.stream(run, reply, dto.stream_options?.include_usage === true, -1, dto.n ?? 1);
  }

  /**
   * Re-opens a reply's stream for the caller that made it: chunks after `lastEventId` (every one the
   * client missed, once), then the live ones.
   */
  async resume(
    completionId: string,
    lastEventId: number,
    includeUsage: boolean,
    caller: string,
    reply: FastifyReply,
  ): Promise<void> {
    this.drain.assertAccepting();
    const run = await this.chat.resume(completionId, caller, abortOnDisconnect(reply));
    return this.stream(run, reply, includeUsage, lastEventId);
  }

  private stream(run: ReplyRun, reply: FastifyReply, includeUsage: boolean, after: number, choices = 1): Promise<void> {
    const chunks = new ChunkFormatter(run.who, includeUsage);
    return streamReply(
      run,
      reply,
      {
        opening: () => chunks.roleChunks(choices),
        delta: (event) => chunks.deltaChunks(event),
        final: (event) => chunks.finalChunks(finishReasonsOf(event), event.usage),
      },
      { numbered: true, after },
    );
  }
}
