import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { abortOnDisconnect } from './abort-on-disconnect.js';
import { toOpenAiError } from '../errors/to-openai-error.js';
import { DrainService } from '../platform/drain.service.js';
import { parseChatBody } from './chat-body.parser.js';
import { ChunkFormatter, finishReasonsOf } from './chat-response.mapper.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ChatService, type ChatRun } from './chat.service.js';
import { SseWriter } from './sse.writer.js';

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

  async handle(body: unknown, reply: FastifyReply, onlyDeployment?: DeploymentConfig): Promise<ChatCompletion | void> {
    this.drain.assertAccepting();
    const dto = parseChatBody(body);
    const signal = abortOnDisconnect(reply);
    if (!dto.stream) {
      const completion = await this.chat.complete(dto, signal, onlyDeployment);
      reply.header('x-request-id', completion.id.slice('chatcmpl-'.length));
      return completion;
    }

    const run = await this.chat.start(dto, signal, onlyDeployment);
    reply.header('x-request-id', run.who.id.slice('chatcmpl-'.length));
    return this.stream(run, reply, dto.stream_options?.include_usage === true, -1, dto.n ?? 1);
  }

  /** Re-opens a reply's stream: chunks after `lastEventId` (every one the client missed, once), then the live ones. */
  async resume(completionId: string, lastEventId: number, includeUsage: boolean, reply: FastifyReply): Promise<void> {
    this.drain.assertAccepting();
    const run = await this.chat.resume(completionId, abortOnDisconnect(reply));
    return this.stream(run, reply, includeUsage, lastEventId);
  }

  private async stream(run: ChatRun, reply: FastifyReply, includeUsage: boolean, after: number, choices = 1): Promise<void> {
    // Wait for the worker's first event so a failure before generation is still a plain JSON error.
    const first = await run.events.next();
    const headers = reply.getHeaders();
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    const chunks = new ChunkFormatter(run.who, includeUsage);
    // Chunks are numbered by their place in the reply, the same on every replay of its events.
    let index = -1;
    const send = (list: unknown[]) => {
      for (const chunk of list) if (++index > after) sse.data(chunk, index);
    };
    sse.open(headers);
    let opened = false;
    let sent = false;
    try {
      for (let step = first; !step.done; step = await run.events.next()) {
        const event = step.value;
        if (event.type === 'start') {
          // A resumed attempt continues the same message; one that starts over cannot be taken back once sent.
          if (!event.resumed && sent) throw OpenAiHttpError.serverError('The worker generating this reply stopped and it had to start over; retry the request.', 'reply_restarted');
          if (!opened) send(chunks.roleChunks(choices));
          opened = true;
        } else if (event.type === 'delta') {
          send(chunks.deltaChunks(event));
          sent = true;
        } else if (event.type === 'end') send(chunks.finalChunks(finishReasonsOf(event), event.usage));
      }
      sse.done();
    } catch (err) {
      sse.fail(toOpenAiError(err).toBody());
    }
  }
}
