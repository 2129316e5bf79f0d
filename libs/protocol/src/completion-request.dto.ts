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
import type { DeploymentTraits } from './deployment-traits.js';
import { GenerationFieldsDto } from './generation-fields.dto.js';
import type { GenerationBody, GenerationRequest } from './generation-request.js';
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
 * The legacy completions body (`POST /v1/completions`): fields, its own rules (`checkSurface`), and the
 * neutral request it is (`toRequest`: raw prompts, no chat template). As in the chat body,
 * `@IsOptional` lets `null` mean "not set". Fields this server cannot honour
 * (`suffix`, `best_of` above `n`) are typed here so a malformed value gets a
 * precise 400; the capability check refuses meaningful values. Token-id
 * prompts are refused before this validation runs. Unset `max_tokens`: the
 * deployment's preset, else OpenAI's 16.
 */
export class CompletionRequestDto extends GenerationFieldsDto implements GenerationBody {
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
   * Legacy completions' own rules: best_of other than n (extra candidates generated and discarded), suffix
   * (text insertion) and logprobs of the prompt's tokens are not supported, so they are refused, naming the
   * field, rather than silently ignored.
   */
  checkSurface(): void {
    const n = this.choicesPerPrompt();
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

  /** The body in neutral terms: raw prompts instead of chat turns, so no template is applied. */
  /** Legacy completions name no service tier. */
  askedTier(): undefined {
    return undefined;
  }

  loggedPrompt(): unknown {
    return this.prompt;
  }

  toRequest(deployment: DeploymentTraits): GenerationRequest {
    const prompts = this.prompts();
    return {
      turns: () => [],
      prompts,
      tools: { tools: [], choice: 'auto', choiceAt: 'tool_choice', parallel: true },
      sampling: this.sampling(deployment.defaults),
      maxTokens: this.maxTokens(deployment),
      maxTokensAt: 'max_tokens',
      stop: this.stopList(),
      n: this.choicesPerPrompt(),
      logprobs: given(this.logprobs),
      // Each prompt is its own sequence: each must fit on its own.
      promptChars: Math.max(...prompts.map((p) => p.length)),
      promptAt: 'prompt',
      images: [],
      imageType: 'image_url',
      imagesIn: 'request',
    };
  }
}
