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
import { GenerationFieldsDto } from './generation-fields.dto.js';
import { isWellFormedText } from './message-content.validator.js';

export const MAX_PROMPTS = 128;

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
 * prompts are refused before this validation runs. Unset `max_tokens`: the
 * deployment's preset, else OpenAI's 16.
 */
export class CompletionRequestDto extends GenerationFieldsDto {
  @Validate(PromptConstraint)
  prompt: string | string[];

  @IsOptional() @IsInt() @Min(1) @Max(128)
  best_of?: number | null;

  /** Alternatives reported per generated token; 0 reports only the chosen token's. OpenAI's limit is 5. */
  @IsOptional() @IsInt() @Min(0) @Max(5)
  logprobs?: number | null;

  @IsOptional() @IsBoolean()
  echo?: boolean | null;

  @IsOptional() @IsString()
  suffix?: string | null;
}
