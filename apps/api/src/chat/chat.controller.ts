import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
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

  /** Resumes a streamed reply: send the chunk id last received as Last-Event-ID (or ?last_event_id=). */
  @Get('completions/:id/stream')
  resume(
    @Param('id') id: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Query('include_usage') includeUsage: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const raw = header ?? query ?? '-1';
    const last = Number(raw);
    if (!Number.isInteger(last) || last < -1) throw OpenAiHttpError.invalidRequest('Last-Event-ID must be the integer id of the last chunk received.', 'Last-Event-ID');
    return this.http.resume(id, last, includeUsage === 'true', reply);
  }
}
