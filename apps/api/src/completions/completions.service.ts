import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { Completion } from '@conveyor/openai';
import { checkGeneration, type CompletionRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService } from '../generation/generation.service.js';
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
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly generation: GenerationService,
  ) {}

  /** Enqueues the request for `caller`; nothing is enqueued when it is refused. `only` binds it to one deployment. */
  start(
    dto: CompletionRequestDto,
    caller: string,
    signal: AbortSignal,
    only?: DeploymentConfig,
    deadlineMs: number | null = null,
  ): Promise<ReplyRun> {
    const deployment = this.generation.deploymentFor(dto.model, only);
    const checked = checkGeneration(dto, deployment, this.config.api.images);
    return this.generation.submit(deployment, (requestId, now) => checked.toJob(requestId, now), signal, {
      idPrefix: openAiCompletions.idPrefix,
      route: '/v1/completions',
      model: dto.model,
      stream: dto.stream === true,
      prompt: dto.prompt,
      caller,
      asked: { deadlineMs },
    });
  }

  /** A non-streamed reply: the same event path, gathered. */
  async complete(dto: CompletionRequestDto, run: ReplyRun): Promise<Completion> {
    return toCompletion(run.who, await collectReply(run), completionShape(dto));
  }
}
