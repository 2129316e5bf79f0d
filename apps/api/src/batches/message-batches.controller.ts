import { Readable } from 'node:stream';
import { Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiParam, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { DeletedMessageBatch, MessageBatch, MessageBatchList } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ANTHROPIC } from '../dialects/anthropic.dialect.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { BodyStreamOf, StreamsBody, type BodyStream } from '../http/streamed-body.js';
import { MessageBatchesService } from './message-batches.service.js';

const ID = { name: 'id', description: 'The message batch id (msgbatch_…)' };

/**
 * Anthropic's Message Batches API, on the batch runner OpenAI's batches use: its errors have Anthropic's
 * shape; a key comes as `x-api-key` or `Bearer`.
 */
@Controller('v1/messages/batches')
@UseAuthScheme('Bearer')
@Speaks(ANTHROPIC)
@ApiHeader({ name: 'anthropic-version', required: false, description: 'Accepted; any version gets the same API' })
export class MessageBatchesController {
  constructor(private readonly batches: MessageBatchesService) {}

  @Post()
  @HttpCode(200)
  @ApiRoute('Create a message batch: each request a Messages body, run on the batch runner', {
    auth: 'Bearer',
    errors: [400, 401, 413],
  })
  @ApiBody({
    required: true,
    schema: {
      type: 'object',
      required: ['requests'],
      properties: {
        requests: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['custom_id', 'params'],
            properties: {
              custom_id: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
              params: { type: 'object', description: 'A `POST /v1/messages` body, without `stream`' },
            },
          },
        },
      },
    },
  })
  @ApiJsonOk('A message batch')
  @StreamsBody()
  create(@BodyStreamOf() body: BodyStream, @Caller() owner: string): Promise<MessageBatch> {
    return this.batches.create(owner, body);
  }

  @Get()
  @ApiRoute('Message batches of this key, newest first', { auth: 'Bearer', errors: [400, 401] })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 } })
  @ApiQuery({ name: 'after_id', required: false, description: 'The page after this batch (older ones)' })
  @ApiQuery({ name: 'before_id', required: false, description: 'The page before this batch (newer ones)' })
  @ApiJsonOk('{data, has_more, first_id, last_id}')
  list(
    @Caller() owner: string,
    @Query('limit') limit?: string,
    @Query('after_id') afterId?: string,
    @Query('before_id') beforeId?: string,
  ): Promise<MessageBatchList> {
    const n = limit === undefined ? 20 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 1000)
      throw OpenAiHttpError.invalidRequest('limit must be an integer from 1 to 1000.', 'limit');
    return this.batches.list(owner, { limit: n, afterId, beforeId });
  }

  @Get(':id')
  @ApiRoute('A message batch', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam(ID)
  @ApiJsonOk('A message batch')
  get(@Param('id') id: string, @Caller() owner: string): Promise<MessageBatch> {
    return this.batches.get(owner, id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiRoute('Cancel a message batch: running requests finish, the rest end canceled', {
    auth: 'Bearer',
    errors: [400, 401, 404, 409],
  })
  @ApiParam(ID)
  @ApiJsonOk('The message batch, canceling')
  cancel(@Param('id') id: string, @Caller() owner: string): Promise<MessageBatch> {
    return this.batches.cancel(owner, id);
  }

  @Delete(':id')
  @ApiRoute('Delete a message batch that has ended, with its results', {
    auth: 'Bearer',
    errors: [400, 401, 404, 409],
  })
  @ApiParam(ID)
  @ApiJsonOk('{id, type: "message_batch_deleted"}')
  delete(@Param('id') id: string, @Caller() owner: string): Promise<DeletedMessageBatch> {
    return this.batches.delete(owner, id);
  }

  @Get(':id/results')
  @ApiRoute("A message batch's results, once it has ended: one JSON line per request, in no particular order", {
    auth: 'Bearer',
    errors: [400, 401, 404, 409],
  })
  @ApiParam(ID)
  @ApiProduces('application/jsonl')
  @ApiJsonOk('JSON lines `{custom_id, result}`')
  async results(@Param('id') id: string, @Caller() owner: string, @Res() reply: FastifyReply): Promise<void> {
    const lines = await this.batches.results(owner, id);
    void reply.type('application/jsonl').send(Readable.from(lines));
  }
}
