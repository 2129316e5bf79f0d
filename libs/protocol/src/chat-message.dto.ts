import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  Validate,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import type { ChatRole, ContentPart } from '@conveyor/openai';
import { MessageContentConstraint } from './message-content.validator.js';
import { ToolCallDto } from './tools.dto.js';

export const CHAT_ROLES: readonly ChatRole[] = ['system', 'developer', 'user', 'assistant', 'tool'];

export class ChatMessageDto {
  @IsIn(CHAT_ROLES, { message: `role must be one of ${CHAT_ROLES.join(', ')}` })
  role: ChatRole;

  // An assistant turn that only called tools may have no content, as OpenAI clients send it.
  @ValidateIf(
    (m: ChatMessageDto) =>
      !(m.role === 'assistant' && (m.content === null || m.content === undefined) && !!m.tool_calls?.length),
  )
  @Validate(MessageContentConstraint)
  @ApiProperty({
    nullable: true,
    description:
      'Text, or a list of text and image parts. Images are base64 data: URIs (PNG, JPEG, WebP or GIF), for deployments whose model reads images.',
    oneOf: [
      { type: 'string' },
      {
        type: 'array',
        items: {
          type: 'object',
          required: ['type'],
          properties: {
            type: { type: 'string', enum: ['text', 'image_url'] },
            text: { type: 'string' },
            image_url: {
              type: 'object',
              required: ['url'],
              properties: {
                url: { type: 'string', description: 'data:image/png;base64,...; URLs are never fetched' },
                detail: { type: 'string', enum: ['auto', 'low', 'high'] },
              },
            },
          },
        },
      },
    ],
  })
  content: string | ContentPart[] | null;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  name?: string | null;

  @ValidateIf((m: ChatMessageDto) => m.role === 'assistant' && m.tool_calls !== null && m.tool_calls !== undefined)
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => ToolCallDto)
  tool_calls?: ToolCallDto[] | null;

  @ValidateIf((m: ChatMessageDto) => m.role === 'tool')
  @IsString({ message: 'tool_call_id must be the id of the call a tool message answers' })
  @MaxLength(256)
  tool_call_id?: string | null;
}
