import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsInt, IsObject, IsOptional, Max, Min, Validate, ValidateNested } from 'class-validator';
import { ChatMessageDto } from './chat-message.dto.js';
import { GenerationFieldsDto, MAX_TOKENS_LIMIT } from './generation-fields.dto.js';
import { ToolChoiceConstraint } from './tool-choice.validator.js';
import { ResponseFormatDto, ToolDto } from './tools.dto.js';

export { StreamOptionsDto } from './generation-fields.dto.js';

export const MAX_MESSAGES = 4096;

/**
 * The chat body of every route.
 * Fields this server cannot honour yet are typed here so a malformed value
 * still gets a precise 400; the capability check refuses meaningful values.
 */
export class ChatCompletionRequestDto extends GenerationFieldsDto {
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_MESSAGES)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages: ChatMessageDto[];

  @IsOptional() @IsInt() @Min(1) @Max(MAX_TOKENS_LIMIT)
  max_completion_tokens?: number | null;

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
}
