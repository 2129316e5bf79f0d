import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNotEmpty, IsNumber, IsObject, IsOptional, IsString, Max, Min, Validate, ValidateNested } from 'class-validator';
import { StopSequencesConstraint } from './string-or-strings.validator.js';
import { LogitBiasConstraint } from './tool-choice.validator.js';

export const MAX_TOKENS_LIMIT = 1 << 20;

export class StreamOptionsDto {
  @IsOptional()
  @IsBoolean()
  include_usage?: boolean | null;
}

/**
 * The fields every generating body shares (chat and legacy completions).
 * `@IsOptional` skips both undefined and null, so `"stop": null` (which
 * OpenAI clients send) means "not set".
 */
export class GenerationFieldsDto {
  @IsString()
  @IsNotEmpty()
  model: string;

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

  /** Choices (per prompt, for legacy completions). */
  @IsOptional() @IsInt() @Min(1) @Max(128)
  n?: number | null;

  @IsOptional() @Validate(LogitBiasConstraint)
  logit_bias?: Record<string, number> | null;

  /** vLLM extra: end-of-generation tokens are held back until this many tokens. */
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TOKENS_LIMIT)
  min_tokens?: number | null;

  @IsOptional() @IsString()
  user?: string | null;

  /** vLLM / llama.cpp extra: keep generating past end-of-generation tokens, up to max_tokens. */
  @IsOptional() @IsBoolean()
  ignore_eos?: boolean | null;
}
