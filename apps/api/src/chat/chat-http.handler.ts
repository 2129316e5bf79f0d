import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { ChatCompletionRequestDto } from '@conveyor/protocol';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import { finishReasonsOf, type ReplyRun } from '../contracts/reply-run.js';
import { streamReply } from '../generation/reply-stream.js';
import { ChunkFormatter } from './chat-response.mapper.js';
import { ChatService } from './chat.service.js';
import { openAiChat } from './openai-chat.dialect.js';

/**
 * The HTTP shape of a chat reply, shared by every route that takes the chat
 * body: a JSON chat.completion, or Server-Sent Events when `stream` is true.
 */
@Injectable()
export class ChatHttpHandler {
  constructor(
    private readonly chat: ChatService,
    private readonly http: HttpGeneration,
  ) {}

  /** `caller`: the name of the API key the request came with; its reply is that key's alone. */
  async handle(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<ChatCompletion | void> {
    const { dto, signal, identify, deadlineMs } = this.http.accept(reply, () =>
      parseRequest(ChatCompletionRequestDto, body),
    );
    const run = await this.chat.start(dto, { caller, signal, only: onlyDeployment, deadlineMs });
    identify(run.who.id.slice(openAiChat.idPrefix.length), run.headers);
    if (!dto.stream) return this.chat.complete(run);
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
    const run = await this.chat.resume(completionId, caller, this.http.accept(reply).signal);
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
      { numbered: true, after, framing: openAiChat.framing },
    );
  }
}
