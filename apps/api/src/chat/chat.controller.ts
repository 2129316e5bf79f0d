import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ChatHttpHandler } from './chat-http.handler.js';

/** OpenAI's route, as local servers and serverless GPU clouds expose it. */
@Controller('v1/chat')
@UseAuthScheme('Bearer')
export class ChatController {
  constructor(private readonly http: ChatHttpHandler) {}

  @Post('completions')
  @HttpCode(200)
  create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<ChatCompletion | void> {
    return this.http.handle(body, reply);
  }
}
