import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion } from '@conveyor/openai';
import { ChatCompletionRequestDto } from '@conveyor/protocol';
import { ApiHeader, ApiParam, ApiProduces, ApiQuery } from '@nestjs/swagger';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';

import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ChatHttpHandler } from './chat-http.handler.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { openAiChat } from './openai-chat.dialect.js';

/** OpenAI's route, as local servers and serverless GPU clouds expose it. */
@Controller()
@UseAuthScheme('Bearer')
@Speaks(openAiChat)
export class ChatController {
  constructor(private readonly http: ChatHttpHandler) {}

  @Post(openAiChat.route)
  @HttpCode(200)
  @ApiRoute('Chat completion (sync or SSE)', { auth: 'Bearer', errors: [400, 401, 404, 413, 429, 503, 504] })
  @ApiJsonBody(ChatCompletionRequestDto)
  @ApiJsonOrEvents('chat.completion')
  create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion | void> {
    return this.http.handle(body, caller, reply);
  }

  /** Resumes a streamed reply: send the chunk id last received as Last-Event-ID (or ?last_event_id=). */
  @Get(`${openAiChat.route}/:id/stream`)
  @ApiRoute('Resume a streamed reply after the chunk named by Last-Event-ID', {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiParam({ name: 'id', description: "The chunks' id (chatcmpl-…)" })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Id of the last chunk received' })
  @ApiQuery({ name: 'last_event_id', required: false, description: 'Same as Last-Event-ID' })
  @ApiQuery({ name: 'include_usage', required: false, description: 'true adds the usage chunk' })
  @ApiProduces('text/event-stream')
  resume(
    @Param('id') id: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Query('include_usage') includeUsage: string | undefined,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const raw = header ?? query ?? '-1';
    const last = Number(raw);
    if (!Number.isInteger(last) || last < -1)
      throw OpenAiHttpError.invalidRequest(
        'Last-Event-ID must be the integer id of the last chunk received.',
        'Last-Event-ID',
      );
    return this.http.resume(id, last, includeUsage === 'true', caller, reply);
  }
}
