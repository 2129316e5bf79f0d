import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  Validate,
  ValidateNested,
} from 'class-validator';
import type { Sampling } from '@conveyor/queue';
import type { SamplingPreset } from './deployment-traits.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';
import { StopSequencesConstraint } from './string-or-strings.validator.js';
import { LogitBiasConstraint } from './tool-choice.validator.js';

export { MAX_TOKENS_LIMIT } from './limits.js';

export class StreamOptionsDto {
  @IsOptional()
  @IsBoolean()
  include_usage?: boolean | null;
}

/**
 * The fields every generating body shares (chat and legacy completions), and how they become
 * the job's sampling and stop list. `@IsOptional` skips both undefined and null, so
 * `"stop": null` (which OpenAI clients send) means "not set".
 */
export class GenerationFieldsDto extends SamplingFieldsDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  max_tokens?: number | null;

  @IsOptional()
  @IsInt()
  @Min(Number.MIN_SAFE_INTEGER)
  @Max(Number.MAX_SAFE_INTEGER)
  seed?: number | null;

  @IsOptional()
  @Validate(StopSequencesConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 16 }],
  })
  stop?: string | string[] | null;

  @IsOptional()
  @IsBoolean()
  stream?: boolean | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto | null;

  /** Choices (per prompt, for legacy completions). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(128)
  n?: number | null;

  @IsOptional()
  @Validate(LogitBiasConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    description: 'Token id → bias from -100 to 100',
    type: Object,
    additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
  })
  logit_bias?: Record<string, number> | null;

  /** vLLM extra: end-of-generation tokens are held back until this many tokens. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_TOKENS_LIMIT)
  min_tokens?: number | null;

  @IsOptional()
  @IsString()
  user?: string | null;

  /** vLLM / llama.cpp extra: keep generating past end-of-generation tokens, up to max_tokens. */
  @IsOptional()
  @IsBoolean()
  ignore_eos?: boolean | null;

  /** The request's sampling; a field it leaves unset takes the deployment's preset, if any. */
  sampling(preset: SamplingPreset = {}): Sampling {
    return {
      ...this.knobs(preset),
      seed: given(this.seed),
      ignoreEos: given(this.ignore_eos),
      minTokens: given(this.min_tokens) || undefined,
      logitBias: this.logit_bias && Object.keys(this.logit_bias).length ? { ...this.logit_bias } : undefined,
    };
  }

  stopList(): string[] {
    const stop = given(this.stop);
    if (stop === undefined) return [];
    return typeof stop === 'string' ? [stop] : [...stop];
  }
}
