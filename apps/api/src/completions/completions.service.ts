import { Injectable } from '@nestjs/common';
import type { Completion } from '@conveyor/openai';
import type { CompletionRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService, type RequestContext } from '../generation/generation.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { toCompletion, type CompletionShape } from './completion-response.mapper.js';
import { openAiCompletions } from './openai-completions.dialect.js';

/** How a request shapes its reply: the echoed prompts, and whether logprobs were asked for. */
export const completionShape = (dto: CompletionRequestDto): CompletionShape => ({
  ...(dto.echo === true ? { echo: { prompts: dto.prompts(), n: dto.choicesPerPrompt() } } : {}),
  logprobs: dto.logprobs !== null && dto.logprobs !== undefined,
});

/** The legacy completions use case: the shared generation pipeline, fed raw prompts. */
@Injectable()
export class CompletionsService {
  constructor(private readonly generation: GenerationService) {}

  /**
   * Enqueues the request for its caller, who alone may resume its reply; nothing is enqueued when it is
   * refused. The one way in of every generating surface (GenerationService.start), as openAiCompletions declares it.
   */
  start(dto: CompletionRequestDto, request: RequestContext): Promise<ReplyRun> {
    return this.generation.start(openAiCompletions, dto, request);
  }

  /** A non-streamed reply: the same event path, gathered. */
  async complete(dto: CompletionRequestDto, run: ReplyRun): Promise<Completion> {
    return toCompletion(run.who, await collectReply(run), completionShape(dto));
  }
}
