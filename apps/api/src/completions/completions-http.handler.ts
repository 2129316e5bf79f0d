import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { Completion } from '@conveyor/openai';
import type { CompletionRequestDto } from '@conveyor/validation';
import { abortOnDisconnect } from '../chat/abort-on-disconnect.js';
import { finishReasonsOf } from '../chat/chat-response.mapper.js';
import type { ChatRun } from '../chat/chat.service.js';
import { SseWriter } from '../chat/sse.writer.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { toOpenAiError } from '../errors/to-openai-error.js';
import { DrainService } from '../platform/drain.service.js';
import { parseCompletionBody } from './completion-body.parser.js';
import { choicesPerPrompt, promptsOf } from './completion-request.mapper.js';
import { CompletionChunkFormatter } from './completion-response.mapper.js';
import { completionShape, CompletionsService, TEXT_COMPLETION_ID_PREFIX } from './completions.service.js';

/** The HTTP shape of a legacy completion: a JSON text_completion, or Server-Sent Events when `stream` is true. */
@Injectable()
export class CompletionsHttpHandler {
  constructor(
    private readonly completions: CompletionsService,
    private readonly drain: DrainService,
  ) {}

  async handle(body: unknown, reply: FastifyReply, onlyDeployment?: DeploymentConfig): Promise<Completion | void> {
    this.drain.assertAccepting();
    const dto = parseCompletionBody(body);
    const signal = abortOnDisconnect(reply);
    if (!dto.stream) {
      const completion = await this.completions.complete(dto, signal, onlyDeployment);
      reply.header('x-request-id', completion.id.slice(TEXT_COMPLETION_ID_PREFIX.length));
      return completion;
    }
    const run = await this.completions.start(dto, signal, onlyDeployment);
    reply.header('x-request-id', run.who.id.slice(TEXT_COMPLETION_ID_PREFIX.length));
    return this.stream(run, reply, dto);
  }

  private async stream(run: ChatRun, reply: FastifyReply, dto: CompletionRequestDto): Promise<void> {
    // Wait for the worker's first event so a failure before generation is still a plain JSON error.
    const first = await run.events.next();
    const headers = reply.getHeaders();
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    const chunks = new CompletionChunkFormatter(run.who, dto.stream_options?.include_usage === true, completionShape(dto));
    const choices = promptsOf(dto).length * choicesPerPrompt(dto);
    const send = (list: unknown[]) => list.forEach((chunk) => sse.data(chunk));
    sse.open(headers);
    let opened = false;
    let sent = false;
    try {
      for (let step = first; !step.done; step = await run.events.next()) {
        const event = step.value;
        if (event.type === 'start') {
          // A resumed attempt continues the same text; one that starts over cannot be taken back once sent.
          if (!event.resumed && sent) throw OpenAiHttpError.serverError('The worker generating this reply stopped and it had to start over; retry the request.', 'reply_restarted');
          if (!opened) send(chunks.openingChunks(choices));
          opened = true;
        } else if (event.type === 'delta') {
          const list = chunks.deltaChunks(event);
          send(list);
          sent ||= list.length > 0;
        } else if (event.type === 'end') send(chunks.finalChunks(finishReasonsOf(event), choices, event.usage));
      }
      sse.done();
    } catch (err) {
      sse.fail(toOpenAiError(err).toBody());
    }
  }
}
