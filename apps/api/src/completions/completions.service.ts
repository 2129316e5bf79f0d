import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { Completion } from '@conveyor/openai';
import type { CompletionRequestDto } from '@conveyor/validation';
import { ChatService, collectReply, type ChatRun } from '../chat/chat.service.js';
import { assertCompletionSupported } from './completion-capabilities.js';
import { choicesPerPrompt, promptsOf, toCompletionJob } from './completion-request.mapper.js';
import { toCompletion, type CompletionShape } from './completion-response.mapper.js';

export const TEXT_COMPLETION_ID_PREFIX = 'cmpl-';

/** How a request shapes its reply: the echoed prompts, and whether logprobs were asked for. */
export const completionShape = (dto: CompletionRequestDto): CompletionShape => ({
  ...(dto.echo === true ? { echo: { prompts: promptsOf(dto), n: choicesPerPrompt(dto) } } : {}),
  logprobs: dto.logprobs !== null && dto.logprobs !== undefined,
});

/** The legacy completions use case: the chat path's queue and reply relay, fed raw prompts. */
@Injectable()
export class CompletionsService {
  constructor(private readonly chat: ChatService) {}

  /** Enqueues the request; nothing is enqueued when it is refused. `only` binds it to one deployment. */
  start(dto: CompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<ChatRun> {
    const deployment = this.chat.deploymentFor(dto.model, only);
    assertCompletionSupported(dto, deployment);
    return this.chat.submit(deployment, (requestId, now) => toCompletionJob(dto, requestId, deployment, now), signal, {
      idPrefix: TEXT_COMPLETION_ID_PREFIX,
      stream: dto.stream === true,
      prompt: dto.prompt,
    });
  }

  async complete(dto: CompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<Completion> {
    const run = await this.start(dto, signal, only);
    return toCompletion(run.who, await collectReply(run), completionShape(dto));
  }
}
