import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { StreamOptionsDto } from './chat-completion-request.dto.js';
import { isWellFormedText } from './message-content.validator.js';
import { StopSequencesConstraint } from './string-or-strings.validator.js';
import { LogitBiasConstraint } from './tool-choice.validator.js';

export const MAX_PROMPTS = 128;
const MAX_TOKENS_LIMIT = 1 << 20;

/** A prompt string, or a non-empty list of at most MAX_PROMPTS of them; all well-formed text. */
@ValidatorConstraint({ name: 'prompt' })
export class PromptConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    const list = typeof value === 'string' ? [value] : value;
    return Array.isArray(list) && list.length > 0 && list.length <= MAX_PROMPTS && list.every((p) => typeof p === 'string' && isWellFormedText(p));
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a string or a non-empty array of at most ${MAX_PROMPTS} strings, without lone UTF-16 surrogates`;
  }
}

/**
 * The legacy completions body (`POST /v1/completions`). As in the chat body,
 * `@IsOptional` lets `null` mean "not set". Fields this server cannot honour
 * (`suffix`, `best_of` above `n`) are typed here so a malformed value gets a
 * precise 400; the capability check refuses meaningful values. Token-id
 * prompts are refused before this validation runs.
 */
export class CompletionRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @Validate(PromptConstraint)
  prompt: string | string[];

  /** Unset: the deployment's preset, else OpenAI's 16. */
  @IsOptional() @IsInt() @Min(1) @Max(MAX_TOKENS_LIMIT)
  max_tokens?: number | null;

  @IsOptional() @IsNumber() @Min(0) @Max(2)
  temperature?: number | null;

  @IsOptional() @IsNumber() @Min(0) @Max(1)
  top_p?: number | null;

  /** 0 and -1 both mean "off", as llama.cpp and vLLM use them. */
  @IsOptional() @IsInt() @Min(-1) @Max(1_000_000)
  top_k?: number | null;

  @IsOptional() @IsNumber() @Min(0) @Max(1)
  min_p?: number | null;

  @IsOptional() @IsNumber() @Min(0.01) @Max(10)
  repetition_penalty?: number | null;

  @IsOptional() @IsNumber() @Min(0.01) @Max(10)
  repeat_penalty?: number | null;

  @IsOptional() @IsNumber() @Min(-2) @Max(2)
  presence_penalty?: number | null;

  @IsOptional() @IsNumber() @Min(-2) @Max(2)
  frequency_penalty?: number | null;

  @IsOptional() @IsInt() @Min(Number.MIN_SAFE_INTEGER) @Max(Number.MAX_SAFE_INTEGER)
  seed?: number | null;

  @IsOptional()
  @Validate(StopSequencesConstraint)
  stop?: string | string[] | null;

  @IsOptional() @IsBoolean()
  stream?: boolean | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto | null;

  /** Choices per prompt. */
  @IsOptional() @IsInt() @Min(1) @Max(128)
  n?: number | null;

  @IsOptional() @IsInt() @Min(1) @Max(128)
  best_of?: number | null;

  /** Alternatives reported per generated token; 0 reports only the chosen token's. OpenAI's limit is 5. */
  @IsOptional() @IsInt() @Min(0) @Max(5)
  logprobs?: number | null;

  @IsOptional() @IsBoolean()
  echo?: boolean | null;

  @IsOptional() @IsString()
  suffix?: string | null;

  @IsOptional() @Validate(LogitBiasConstraint)
  logit_bias?: Record<string, number> | null;

  /** vLLM extra: end-of-generation tokens and stop strings are held back until this many tokens. */
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TOKENS_LIMIT)
  min_tokens?: number | null;

  @IsOptional() @IsString()
  user?: string | null;

  /** vLLM / llama.cpp extra: keep generating past end-of-generation tokens, up to max_tokens. */
  @IsOptional() @IsBoolean()
  ignore_eos?: boolean | null;
}
