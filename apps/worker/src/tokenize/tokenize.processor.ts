import { Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { EngineInputError, type EngineTokenizer } from '@conveyor/engine';
import { ErrorCode } from '@conveyor/openai';
import {
  TOKENIZE_JOB,
  type JobResult,
  type TokenizeInput,
  type TokenizeJobData,
  type Tokenized,
} from '@conveyor/queue';
import { EngineRegistry } from '../engine/engine-registry.js';
import { attemptOf, refuseIfExpired, reportFailure } from '../jobs/job-endings.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplySinks } from '../jobs/reply-sinks.js';

/**
 * Answers one tokenize job (count_tokens, /tokenize, /detokenize) with the deployment's own tokenizer
 * and chat template, so a count is exactly the prompt tokens a generation of the same body reports.
 * It takes no sequence and evaluates nothing: the answer is one `tokens` event, then the end.
 */
@Injectable()
export class TokenizeProcessor implements JobHandler<TokenizeJobData, JobResult> {
  readonly jobName = TOKENIZE_JOB;
  private readonly logger = new Logger(TokenizeProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly sinks: ReplySinks,
  ) {}

  async handle(job: Job<TokenizeJobData, JobResult>): Promise<JobResult> {
    const { requestId, deployment, tokenize } = job.data;
    const attempt = attemptOf(job);
    const { sink } = await this.sinks.open(job.data, attempt);
    await refuseIfExpired(job.data, sink, Date.now());
    try {
      const tokenizer = this.engines.get(deployment)?.tokenizer;
      if (!tokenizer) {
        throw new EngineInputError(
          `The engine of deployment "${deployment}" renders its prompts itself, so this server cannot tokenize for it.`,
          ErrorCode.unsupportedParameter,
          'model',
        );
      }
      const answer = await answerOf(tokenizer, tokenize);
      const usage = { promptTokens: tokenize.kind === 'detokenize' ? 0 : answer.tokens.length, completionTokens: 0 };
      sink.start(usage.promptTokens, false);
      sink.tokens(answer);
      await sink.end({ finishReasons: ['stop'], usage });
      this.logger.debug({ msg: 'tokenize job finished', requestId, deployment, kind: tokenize.kind });
      return { finishReason: 'stop', usage };
    } catch (err) {
      throw await reportFailure(sink, err, job);
    }
  }
}

async function answerOf(tokenizer: EngineTokenizer, input: TokenizeInput): Promise<Tokenized> {
  const maxModelLen = tokenizer.contextSize;
  switch (input.kind) {
    case 'chat':
      return { tokens: await tokenizer.chat({ messages: input.messages, tools: input.tools }), maxModelLen };
    case 'text':
      return { tokens: await tokenizer.text(input.text, input.addSpecialTokens), maxModelLen };
    case 'detokenize':
      return { tokens: input.tokens, maxModelLen, text: await tokenizer.detokenize(input.tokens) };
  }
}
