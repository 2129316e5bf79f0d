import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
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
} from 'class-validator';
import { ChatMessageDto } from './chat-message.dto.js';
import { StopSequencesConstraint } from './string-or-strings.validator.js';
import { LogitBiasConstraint, ToolChoiceConstraint } from './tool-choice.validator.js';
import { ResponseFormatDto, ToolDto } from './tools.dto.js';

export const MAX_MESSAGES = 4096;
const MAX_TOKENS_LIMIT = 1 << 20;

export class StreamOptionsDto {
  @IsOptional()
  @IsBoolean()
  include_usage?: boolean | null;
}

/**
 * The chat body of every route. `@IsOptional` skips both undefined and null,
 * so `"stop": null` (which OpenAI clients send) means "not set".
 * Fields this server cannot honour yet are typed here so a malformed value
 * still gets a precise 400; the capability check refuses meaningful values.
 */
export class ChatCompletionRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_MESSAGES)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages: ChatMessageDto[];

  @IsOptional() @IsInt() @Min(1) @Max(MAX_TOKENS_LIMIT)
  max_tokens?: number | null;

  @IsOptional() @IsInt() @Min(1) @Max(MAX_TOKENS_LIMIT)
  max_completion_tokens?: number | null;

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

  @IsOptional() @IsInt() @Min(1) @Max(128)
  n?: number | null;

  @IsOptional() @IsArray() @ArrayMaxSize(128) @ValidateNested({ each: true }) @Type(() => ToolDto)
  tools?: ToolDto[] | null;

  @IsOptional() @Validate(ToolChoiceConstraint)
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } } | null;

  /** At most one call is made per reply, which both values allow. */
  @IsOptional() @IsBoolean()
  parallel_tool_calls?: boolean | null;

  @IsOptional() @IsObject() @ValidateNested() @Type(() => ResponseFormatDto)
  response_format?: ResponseFormatDto | null;

  @IsOptional() @IsBoolean()
  logprobs?: boolean | null;

  @IsOptional() @IsInt() @Min(0) @Max(20)
  top_logprobs?: number | null;

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
