import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { TokenizeInput, Tokenized } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { collectReply } from './collect-reply.js';
import { GenerationService } from './generation.service.js';

export const TOKENIZE_ID_PREFIX = 'tok-';

/**
 * Token counts from the deployment's own workers: one tokenize job, queued and admitted as any
 * request is, answered with the tokenizer and chat template that deployment's generations use.
 * Shared by Anthropic's count_tokens and vLLM's /tokenize and /detokenize.
 */
@Injectable()
export class TokenizeService {
  constructor(private readonly generation: GenerationService) {}

  /** `caller`: the API key's name, the job's owner. Returns the job's request id and the answer. */
  async run(
    deployment: DeploymentConfig,
    input: TokenizeInput,
    caller: string,
    signal: AbortSignal,
  ): Promise<{ requestId: string; tokenized: Tokenized }> {
    const run = await this.generation.submit(
      deployment,
      (requestId, now) => ({ requestId, deployment: deployment.id, tokenize: input, enqueuedAt: now }),
      signal,
      {
        surface: { idPrefix: TOKENIZE_ID_PREFIX, route: null, operation: null },
        model: deployment.id,
        stream: false,
        prompt: input,
        caller,
      },
    );
    const reply = await collectReply(run);
    if (!reply.tokenized) {
      throw OpenAiHttpError.serverError(
        'The worker ended the tokenize job without its tokens.',
        ErrorCode.tokenizeFailed,
      );
    }
    return { requestId: run.who.id.slice(TOKENIZE_ID_PREFIX.length), tokenized: reply.tokenized };
  }
}
