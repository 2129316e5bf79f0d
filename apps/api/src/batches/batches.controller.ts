import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { Batch, ListPage } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { BatchesService } from './batches.service.js';

/** OpenAI's Batches API over the chat queue. */
@Controller('v1/batches')
@UseAuthScheme('Bearer')
export class BatchesController {
  constructor(private readonly batches: BatchesService) {}

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Caller() owner: string): Promise<Batch> {
    return this.batches.create(owner, body);
  }

  @Get()
  list(@Caller() owner: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<ListPage<Batch>> {
    const n = limit === undefined ? 20 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 100) throw OpenAiHttpError.invalidRequest('limit must be an integer from 1 to 100.', 'limit');
    return this.batches.list(owner, after, n);
  }

  @Get(':id')
  get(@Param('id') id: string, @Caller() owner: string): Promise<Batch> {
    return this.batches.get(owner, id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Caller() owner: string): Promise<Batch> {
    return this.batches.cancel(owner, id);
  }
}
