import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { UsageCompletionsPage } from '@conveyor/openai';
import { AdminKeyGuard } from '../admin/admin-key.guard.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { parseUsageQuery } from './usage-query.parser.js';
import { UsageService } from './usage.service.js';

/**
 * OpenAI's Usage API for completions, behind the admin key as OpenAI's admin routes are: tokens and
 * requests per time bucket, by API key (its name), deployment (`model`), batch and route.
 */
@Controller('v1/organization/usage')
@UseGuards(AdminKeyGuard)
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('completions')
  @ApiRoute("Completions usage by time bucket, as OpenAI's Usage API answers it (admin key)", {
    auth: 'Bearer',
    errors: [400, 401, 404],
  })
  @ApiQuery({ name: 'start_time', type: Number, description: 'Unix seconds: the first bucket' })
  @ApiQuery({ name: 'end_time', type: Number, required: false, description: 'Unix seconds: buckets start before it' })
  @ApiQuery({ name: 'bucket_width', enum: ['1m', '1h', '1d'], required: false })
  @ApiQuery({
    name: 'group_by',
    required: false,
    isArray: true,
    enum: ['api_key_id', 'model', 'batch', 'route', 'project_id', 'user_id', 'service_tier'],
  })
  @ApiQuery({ name: 'api_key_ids', required: false, isArray: true, type: String, description: 'Key names' })
  @ApiQuery({ name: 'models', required: false, isArray: true, type: String, description: 'Deployment ids' })
  @ApiQuery({ name: 'batch', required: false, type: Boolean })
  @ApiQuery({ name: 'limit', required: false, type: Number })
  @ApiQuery({ name: 'page', required: false, type: String })
  @ApiJsonOk('`{object: "page", data: [{object: "bucket", start_time, end_time, results}], has_more, next_page}`')
  completions(@Query() query: Record<string, unknown>): Promise<UsageCompletionsPage> {
    return this.usage.completions(parseUsageQuery(query));
  }
}
