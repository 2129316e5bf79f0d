import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';

/** The hosted model-host form: the chat body POSTed to an environment's predict route. */
@Controller('environments/production')
@UseAuthScheme('Api-Key')
export class PredictController {
  constructor(private readonly http: ChatHttpHandler) {}

  @Post('predict')
  @HttpCode(200)
  predict(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<ChatCompletion | void> {
    return this.http.handle(body, reply);
  }
}
