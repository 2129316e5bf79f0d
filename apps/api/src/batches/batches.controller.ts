import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { Batch, ListPage, WebhookDeliveryObject } from '@conveyor/openai';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { CreateBatchDto } from './create-batch.dto.js';
import { Caller } from '../auth/caller.decorator.js';
import { BatchesService } from './batches.service.js';
import { parseListLimit } from './list-limit.js';

/** OpenAI's Batches API over the chat queue. */
@Controller('v1/batches')
@UseAuthScheme('Bearer')
export class BatchesController {
  constructor(private readonly batches: BatchesService) {}

  @Post()
  @ApiRoute('Create a batch over an uploaded file', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiJsonBody(CreateBatchDto)
  @ApiJsonOk('A batch')
  @HttpCode(200)
  create(@Body() body: unknown, @Caller() owner: string): Promise<Batch> {
    return this.batches.create(owner, body);
  }

  @Get()
  @ApiRoute('Batches of this key, newest first', { auth: 'Bearer', errors: [400, 401] })
  @ApiQuery({ name: 'after', required: false })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } })
  @ApiJsonOk('A list of batches')
  list(
    @Caller() owner: string,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<ListPage<Batch>> {
    return this.batches.list(owner, after, parseListLimit(limit));
  }

  @Get(':id')
  @ApiRoute('A batch', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'batch_…' })
  @ApiJsonOk('A batch')
  get(@Param('id') id: string, @Caller() owner: string): Promise<Batch> {
    return this.batches.get(owner, id);
  }

  @Get(':id/webhook_deliveries')
  @ApiRoute("The deliveries of the batch's event to its key's webhook (the platform's own)", {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiParam({ name: 'id', description: 'batch_…' })
  @ApiJsonOk(
    '`{object: "list", data: [{object: "webhook_delivery", event_id, type, status, attempts, last_error, finished_at}]}`',
  )
  webhookDeliveries(@Param('id') id: string, @Caller() owner: string): Promise<ListPage<WebhookDeliveryObject>> {
    return this.batches.webhookDeliveries(owner, id);
  }

  @Post(':id/cancel')
  @ApiRoute('Cancel a batch: running lines finish, the rest end as batch_cancelled', {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiParam({ name: 'id', description: 'batch_…' })
  @ApiJsonOk('The batch')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Caller() owner: string): Promise<Batch> {
    return this.batches.cancel(owner, id);
  }
}
