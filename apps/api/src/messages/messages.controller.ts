import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiParam, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Message, MessageTokensCount } from '@conveyor/openai';
import { MessagesPromptDto, MessagesRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { MessagesHttpHandler } from './messages-http.handler.js';
import { anthropicMessages } from './anthropic-messages.dialect.js';

/** Anthropic's errors on these routes, by status; 529 is a full queue. */
const ERRORS = [400, 401, 404, 413, 429, 504, 529];

/**
 * Anthropic's Messages API. A key comes as `x-api-key` (Anthropic's clients) or `Authorization: Bearer`;
 * `anthropic-version` is accepted and not needed. Errors are in Anthropic's shape.
 */
@Controller(anthropicMessages.route)
@UseAuthScheme('Bearer')
@Speaks(anthropicMessages)
@ApiHeader({ name: 'anthropic-version', required: false, description: 'Accepted; any version gets the same API' })
export class MessagesController {
  constructor(private readonly http: MessagesHttpHandler) {}

  @Post()
  @HttpCode(200)
  @ApiRoute("Anthropic's Messages: a message (sync or SSE)", { auth: 'Bearer', errors: ERRORS })
  @ApiJsonBody(MessagesRequestDto)
  @ApiJsonOrEvents('message')
  create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Message | void> {
    return this.http.create(body, caller, reply);
  }

  @Post('count_tokens')
  @HttpCode(200)
  @ApiRoute("Anthropic's token count: the prompt's tokens as the deployment's workers render it", {
    auth: 'Bearer',
    errors: ERRORS,
  })
  @ApiJsonBody(MessagesPromptDto)
  @ApiJsonOk('{"input_tokens": n}')
  countTokens(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MessageTokensCount> {
    return this.http.countTokens(body, caller, reply);
  }

  /** Resumes a streamed message: send the id of the last event received as Last-Event-ID (or ?last_event_id=). */
  @Get(':id/stream')
  @ApiRoute('Resume a streamed message after the event named by Last-Event-ID', {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiParam({ name: 'id', description: "The message's id (msg_…)" })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Id of the last event received' })
  @ApiQuery({ name: 'last_event_id', required: false, description: 'Same as Last-Event-ID' })
  @ApiQuery({ name: 'thinking', required: false, description: 'true streams thinking blocks, as the request asked' })
  @ApiProduces('text/event-stream')
  resume(
    @Param('id') id: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Query('thinking') thinking: string | undefined,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const last = Number(header ?? query ?? '-1');
    if (!Number.isInteger(last) || last < -1)
      throw OpenAiHttpError.invalidRequest(
        'Last-Event-ID must be the integer id of the last event received.',
        'Last-Event-ID',
      );
    return this.http.resume(id, last, thinking === 'true', caller, reply);
  }
}
