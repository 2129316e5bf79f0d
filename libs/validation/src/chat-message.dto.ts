import { IsIn, IsOptional, IsString, MaxLength, Validate } from 'class-validator';
import type { ChatRole, ContentPart } from '@conveyor/openai';
import { MessageContentConstraint } from './message-content.validator.js';

export const CHAT_ROLES: readonly ChatRole[] = ['system', 'developer', 'user', 'assistant'];

export class ChatMessageDto {
  @IsIn(CHAT_ROLES, { message: `role must be one of ${CHAT_ROLES.join(', ')}` })
  role: ChatRole;

  @Validate(MessageContentConstraint)
  content: string | ContentPart[];

  @IsOptional()
  @IsString()
  @MaxLength(256)
  name?: string | null;
}
