import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  Validate,
  ValidateNested,
} from 'class-validator';
import type { ContentBlockParam, MessagesRole } from '@conveyor/openai';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { MessagesContentConstraint } from './messages-content.validator.js';
import { FUNCTION_NAME } from './tools.dto.js';

/** The parts of Anthropic's Messages body that are objects of their own. */

export class MessageParamDto {
  /** `system`: a system turn (text only), joined to the system prompt after the `system` field, in order. */
  @IsIn(['user', 'assistant', 'system'], { message: 'role must be "user", "assistant" or "system"' })
  role: MessagesRole;

  @Validate(MessagesContentConstraint)
  @ApiProperty({
    description:
      'Text, or content blocks: `text`, `image` (base64 source), `tool_use` and `thinking` (assistant), `tool_result` (user); a system turn takes text only.',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', required: ['type'] } }],
  })
  content: string | ContentBlockParam[];
}

export class MessagesToolDto {
  /** Anthropic's server tools (web search, code execution) have a type of their own; only client tools run here. */
  @IsOptional()
  @IsIn(['custom'], { message: 'type must be "custom": server tools are not available here' })
  type?: 'custom' | null;

  @IsString()
  @Matches(FUNCTION_NAME, { message: 'name must be 1-64 letters, digits, underscores or dashes' })
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(8192)
  description?: string | null;

  /** A JSON Schema; which keywords are supported is checked with the deployment, as for chat tools. */
  @IsObject()
  input_schema: Record<string, unknown>;
}

export class MessagesToolChoiceDto {
  @IsIn(['auto', 'any', 'tool', 'none'], { message: 'type must be one of auto, any, tool, none' })
  type: 'auto' | 'any' | 'tool' | 'none';

  @ValidateIf((c: MessagesToolChoiceDto) => c.type === 'tool')
  @IsString()
  @Matches(FUNCTION_NAME, { message: 'name must name one of the tools' })
  name?: string;

  @IsOptional()
  @IsBoolean()
  disable_parallel_tool_use?: boolean | null;
}

export class ThinkingConfigDto {
  /** `adaptive` and `between_tools` (Anthropic's newer modes) leave the budget to the model: here, to max_tokens. */
  @IsIn(['enabled', 'adaptive', 'between_tools', 'disabled'], {
    message: 'type must be one of enabled, adaptive, between_tools, disabled',
  })
  type: 'enabled' | 'adaptive' | 'between_tools' | 'disabled';

  /** Anthropic asks for at least 1024; a local model's budget is the caller's choice, so any positive count is taken. */
  @ValidateIf((t: ThinkingConfigDto) => t.type === 'enabled')
  @IsInt()
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  budget_tokens?: number;

  /** `omitted`: the thought is not returned. */
  @IsOptional()
  @IsIn(['summarized', 'omitted'], { message: 'display must be "summarized" or "omitted"' })
  display?: 'summarized' | 'omitted' | null;
}

export class MessagesMetadataDto {
  @IsOptional()
  @IsString()
  @MaxLength(256)
  user_id?: string | null;
}

/** Structured output: the reply is JSON that matches `schema`, held to it by grammar as chat's `response_format` is. */
export class MessagesOutputFormatDto {
  @IsIn(['json_schema'], { message: 'type must be "json_schema"' })
  type: 'json_schema';

  /** A JSON Schema; which keywords are supported is checked with the deployment, as for chat's response_format. */
  @IsObject()
  schema: Record<string, unknown>;
}

export class MessagesOutputConfigDto {
  /** How hard the model should try: accepted and not used (a local model's effort is its template's). */
  @IsOptional()
  @IsString()
  @MaxLength(32)
  effort?: string | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MessagesOutputFormatDto)
  format?: MessagesOutputFormatDto | null;
}
