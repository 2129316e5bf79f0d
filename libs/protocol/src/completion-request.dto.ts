import { ApiProperty } from '@nestjs/swagger';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Max,
  Min,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { ErrorCode } from '@conveyor/openai';
import type { GenerationJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { GenerationFieldsDto } from './generation-fields.dto.js';
import { isWellFormedText } from './message-content.validator.js';
import { RequestProblem } from './request-problem.js';
import { given } from './sampling-fields.dto.js';

/** OpenAI's default for legacy completions, used when neither the request nor the deployment sets one. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

export const MAX_PROMPTS = 128;

/** A prompt string, or a non-empty list of at most MAX_PROMPTS of them; all well-formed text. */
@ValidatorConstraint({ name: 'prompt' })
export class PromptConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    const list = typeof value === 'string' ? [value] : value;
    return (
      Array.isArray(list) &&
      list.length > 0 &&
      list.length <= MAX_PROMPTS &&
      list.every((p) => typeof p === 'string' && isWellFormedText(p))
    );
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a string or a non-empty array of at most ${MAX_PROMPTS} strings, without lone UTF-16 surrogates`;
  }
}

/**
 * The legacy completions body (`POST /v1/completions`): fields, the checks that need the
 * deployment (`check`), and the job it becomes (`toJob`: raw prompts, no chat template). As in the chat body,
 * `@IsOptional` lets `null` mean "not set". Fields this server cannot honour
 * (`suffix`, `best_of` above `n`) are typed here so a malformed value gets a
 * precise 400; the capability check refuses meaningful values. Token-id
 * prompts are refused before this validation runs. Unset `max_tokens`: the
 * deployment's preset, else OpenAI's 16.
 */
export class CompletionRequestDto extends GenerationFieldsDto {
  @Validate(PromptConstraint)
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 128 }],
  })
  prompt: string | string[];

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(128)
  best_of?: number | null;

  /** Alternatives reported per generated token; 0 reports only the chosen token's. OpenAI's limit is 5. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(5)
  logprobs?: number | null;

  @IsOptional()
  @IsBoolean()
  echo?: boolean | null;

  @IsOptional()
  @IsString()
  suffix?: string | null;

  prompts(): string[] {
    return typeof this.prompt === 'string' ? [this.prompt] : [...this.prompt];
  }

  /** Choices per prompt; choice `p * n + i` is prompt p's i-th. */
  choicesPerPrompt(): number {
    return given(this.n) ?? 1;
  }

  maxTokens(deployment: DeploymentTraits): number {
    return given(this.max_tokens) ?? deployment.defaults.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS;
  }

  /**
   * Refuses well-formed legacy requests this deployment cannot honour, naming the field, rather
   * than silently ignoring what the caller asked for.
   */
  check(deployment: DeploymentTraits): void {
    const n = this.choicesPerPrompt();
    // Each prompt is its own sequence: each must fit on its own.
    this.checkPromptLength(deployment, Math.max(...this.prompts().map((p) => p.length)), 'prompt');
    this.checkGeneration(deployment, this.maxTokens(deployment), n);
    // Every choice of every prompt is a sequence of one worker's context, generated together.
    const prompts = this.prompts().length;
    if (prompts * n > deployment.parallel) {
      throw new RequestProblem(
        `${prompts} prompt${prompts === 1 ? '' : 's'} with n = ${n} make ${prompts * n} choices; this deployment generates at most ${deployment.parallel} at once.`,
        n > 1 ? 'n' : 'prompt',
        ErrorCode.invalidValue,
      );
    }
    // best_of generates extra candidates server-side and keeps the best; with best_of = n nothing is discarded.
    const bestOf = given(this.best_of);
    if (bestOf !== undefined && bestOf !== 1 && bestOf !== n) {
      throw RequestProblem.unsupported(`best_of other than 1 or n (${n})`, 'best_of');
    }
    if (this.suffix) throw RequestProblem.unsupported('suffix (text insertion)', 'suffix');
    if (this.echo === true && given(this.logprobs) !== undefined) {
      throw RequestProblem.unsupported('logprobs with echo (log-probabilities of the prompt tokens)', 'echo');
    }
  }

  /** The queue's job: raw prompts instead of chat turns, so no template is applied. */
  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): GenerationJobData {
    return {
      requestId,
      deployment: deployment.id,
      messages: [],
      prompts: this.prompts(),
      sampling: this.sampling(deployment.defaults),
      maxTokens: this.maxTokens(deployment),
      stop: this.stopList(),
      n: this.choicesPerPrompt(),
      logprobs: given(this.logprobs),
      enqueuedAt: now,
    };
  }
}
