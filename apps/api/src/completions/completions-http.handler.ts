import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { Completion } from '@conveyor/openai';
import type { CompletionRequestDto } from '@conveyor/protocol';
import { HttpGeneration } from '../generation/http-generation.js';
import { finishReasonsOf, type ReplyRun } from '../contracts/reply-run.js';
import { streamReply } from '../generation/reply-stream.js';
import { parseCompletionBody } from './completion-body.parser.js';
import { CompletionChunkFormatter } from './completion-response.mapper.js';
import { completionShape, CompletionsService } from './completions.service.js';
import { openAiCompletions } from './openai-completions.dialect.js';

/** The HTTP shape of a legacy completion: a JSON text_completion, or Server-Sent Events when `stream` is true. */
@Injectable()
export class CompletionsHttpHandler {
  constructor(
    private readonly completions: CompletionsService,
    private readonly http: HttpGeneration,
  ) {}

  /** `caller`: the name of the API key the request came with. */
  async handle(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<Completion | void> {
    const { dto, signal, identify, deadlineMs } = this.http.accept(reply, () => parseCompletionBody(body));
    const run = await this.completions.start(dto, { caller, signal, only: onlyDeployment, deadlineMs });
    identify(run.who.id.slice(openAiCompletions.idPrefix.length), run.headers);
    if (!dto.stream) return this.completions.complete(dto, run);
    return this.stream(run, reply, dto);
  }

  private stream(run: ReplyRun, reply: FastifyReply, dto: CompletionRequestDto): Promise<void> {
    const chunks = new CompletionChunkFormatter(
      run.who,
      dto.stream_options?.include_usage === true,
      completionShape(dto),
    );
    const choices = dto.prompts().length * dto.choicesPerPrompt();
    return streamReply(
      run,
      reply,
      {
        opening: () => chunks.openingChunks(choices),
        delta: (event) => chunks.deltaChunks(event),
        final: (event) => chunks.finalChunks(finishReasonsOf(event), choices, event.usage),
      },
      { numbered: false, framing: openAiCompletions.framing },
    );
  }
}
