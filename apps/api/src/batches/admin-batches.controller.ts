import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import type { AdminBatch, ListPage } from '@conveyor/openai';
import { AdminKeyGuard } from '../admin/admin-key.guard.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { BatchesService } from './batches.service.js';
import { parseListLimit } from './list-limit.js';

/**
 * Every key's batches, behind the admin key: what an operator looks at when a batch runs away or a team
 * asks where theirs is. Files stay their owner's; the admin may list and cancel.
 */
@Controller('v1/admin/batches')
@UseGuards(AdminKeyGuard)
export class AdminBatchesController {
  constructor(private readonly batches: BatchesService) {}

  @Get()
  @ApiRoute("Every key's batches, Message Batches among them, newest first, each with its owner (admin key)", {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiQuery({ name: 'after', required: false })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } })
  @ApiQuery({ name: 'owner', required: false, description: "An API key's name: only its batches" })
  @ApiJsonOk('A list of batches, each with `owner`')
  list(
    @Query('after') after?: string,
    @Query('limit') limit?: string,
    @Query('owner') owner?: string,
  ): Promise<ListPage<AdminBatch>> {
    return this.batches.listEvery(after, parseListLimit(limit), owner);
  }

  @Post(':id/cancel')
  @ApiRoute("Cancel any key's batch, as its owner would (admin key)", { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'batch_… or msgbatch_…' })
  @ApiJsonOk('The batch, with `owner`')
  @HttpCode(200)
  cancel(@Param('id') id: string): Promise<AdminBatch> {
    return this.batches.cancelAny(id);
  }
}
