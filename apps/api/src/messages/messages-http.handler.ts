import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { Message, MessageTokensCount } from '@conveyor/openai';
import { MessagesPromptDto, MessagesRequestDto } from '@conveyor/protocol';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { streamReply } from '../generation/reply-stream.js';
import { anthropicMessages } from './anthropic-messages.dialect.js';
import { MessageEventFormatter } from './messages-response.mapper.js';
import { MessagesService } from './messages.service.js';

/** The HTTP shape of Anthropic's Messages routes, shared by the plain and the org/app form. */
@Injectable()
export class MessagesHttpHandler {
  constructor(
    private readonly messages: MessagesService,
    private readonly http: HttpGeneration,
  ) {}

  /** `caller`: the name of the API key the request came with; its reply is that key's alone. */
  async create(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<Message | void> {
    const { dto, signal, identify, deadlineMs } = this.http.accept(reply, () => parseRequest(MessagesRequestDto, body));
    const run = await this.messages.start(dto, { caller, signal, only: onlyDeployment, deadlineMs });
    identify(run.who.id.slice(anthropicMessages.idPrefix.length), run.headers);
    if (!dto.stream) return this.messages.create(dto, run);
    return this.stream(run, reply, dto.thinkingEnabled, -1);
  }

  /** Re-opens a streamed message for the caller that made it: the events after `lastEventId`, then the live ones. */
  async resume(
    messageId: string,
    lastEventId: number,
    thinking: boolean,
    caller: string,
    reply: FastifyReply,
  ): Promise<void> {
    const run = await this.messages.resume(messageId, caller, this.http.accept(reply).signal);
    return this.stream(run, reply, thinking, lastEventId);
  }

  async countTokens(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<MessageTokensCount> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(MessagesPromptDto, body));
    const { requestId, body: count } = await this.messages.countTokens(dto, caller, signal, onlyDeployment);
    identify(requestId);
    return count;
  }

  private stream(run: ReplyRun, reply: FastifyReply, thinking: boolean, after: number): Promise<void> {
    const events = new MessageEventFormatter(run.who, thinking, run.maxTokens);
    return streamReply(
      run,
      reply,
      {
        opening: (start) => events.opening(start),
        delta: (event) => events.delta(event),
        final: (event) => events.final(event),
      },
      { numbered: true, after, framing: anthropicMessages.framing },
    );
  }
}
