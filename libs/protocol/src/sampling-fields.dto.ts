import { IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import type { Sampling } from '@conveyor/queue';
import type { SamplingPreset } from './deployment-traits.js';
import { MAX_TOKENS_LIMIT } from './limits.js';

/** OpenAI's default temperature; a request that omits it samples, as OpenAI's API does. */
export const DEFAULT_TEMPERATURE = 1;

/** `null` in a body means "not set". */
export const given = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/**
 * The sampling knobs, as a request body and a deployment's preset both take them. Adding one
 * means a field here, its place in `Sampling` (the job), and the engine applying it.
 * `@IsOptional` skips both undefined and null, so `null` means "not set".
 */
export class SamplingFieldsDto {
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number | null;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number | null;

  /** 0 and -1 both mean "off", as llama.cpp and vLLM use them. */
  @IsOptional()
  @IsInt()
  @Min(-1)
  @Max(1_000_000)
  top_k?: number | null;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  min_p?: number | null;

  /** GPU engines call it repetition_penalty, the desktop apps repeat_penalty: one knob. */
  @IsOptional()
  @IsNumber()
  @Min(0.01)
  @Max(10)
  repetition_penalty?: number | null;

  @IsOptional()
  @IsNumber()
  @Min(0.01)
  @Max(10)
  repeat_penalty?: number | null;

  @IsOptional()
  @IsNumber()
  @Min(-2)
  @Max(2)
  presence_penalty?: number | null;

  @IsOptional()
  @IsNumber()
  @Min(-2)
  @Max(2)
  frequency_penalty?: number | null;

  /** The knobs as a job takes them; one the request leaves unset takes the deployment's preset, if any. */
  protected knobs(preset: SamplingPreset): Sampling {
    return {
      temperature: given(this.temperature) ?? preset.temperature ?? DEFAULT_TEMPERATURE,
      topP: given(this.top_p) ?? preset.top_p,
      topK: given(this.top_k) ?? preset.top_k,
      minP: given(this.min_p) ?? preset.min_p,
      repeatPenalty: given(this.repetition_penalty) ?? given(this.repeat_penalty) ?? preset.repetition_penalty,
      presencePenalty: given(this.presence_penalty) ?? preset.presence_penalty,
      frequencyPenalty: given(this.frequency_penalty) ?? preset.frequency_penalty,
    };
  }
}

/** A deployment's preset in the deployments file: the sampling knobs and a default `max_tokens`. */
export class SamplingPresetDto extends SamplingFieldsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  max_tokens?: number | null;

  /** The preset as requests are filled from it: unset and null fields left out, the two penalty names as one. */
  toPreset(): SamplingPreset {
    const entries: [keyof SamplingPreset, number | null | undefined][] = [
      ['temperature', this.temperature],
      ['top_p', this.top_p],
      ['top_k', this.top_k],
      ['min_p', this.min_p],
      ['repetition_penalty', this.repetition_penalty ?? this.repeat_penalty],
      ['presence_penalty', this.presence_penalty],
      ['frequency_penalty', this.frequency_penalty],
      ['max_tokens', this.max_tokens],
    ];
    return Object.fromEntries(entries.filter(([, v]) => v !== null && v !== undefined)) as SamplingPreset;
  }
}
