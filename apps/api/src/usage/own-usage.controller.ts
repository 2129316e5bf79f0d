import { Controller, Get, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { UsageCompletionsPage } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { parseUsageQuery } from './usage-query.parser.js';
import { UsageService } from './usage.service.js';

/**
 * A key's own usage, in the Usage API's shape, to the key itself: the console shows it to a user who
 * is not the admin. Whatever `api_key_ids` says, only the caller's key is counted.
 */
@Controller('v1/usage')
@UseAuthScheme('Bearer')
export class OwnUsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('completions')
  @ApiRoute("The calling key's completions usage by time bucket, in the Usage API's shape", {
    auth: 'Bearer',
    errors: [400, 401],
  })
  @ApiQuery({ name: 'start_time', type: Number, description: 'Unix seconds: the first bucket' })
  @ApiQuery({ name: 'end_time', type: Number, required: false, description: 'Unix seconds: buckets start before it' })
  @ApiQuery({ name: 'bucket_width', enum: ['1m', '1h', '1d'], required: false })
  @ApiQuery({ name: 'group_by', required: false, isArray: true, enum: ['model', 'batch', 'route', 'service_tier'] })
  @ApiQuery({ name: 'limit', required: false, type: Number })
  @ApiQuery({ name: 'page', required: false, type: String })
  @ApiJsonOk('`{object: "page", data: [{object: "bucket", start_time, end_time, results}], has_more, next_page}`')
  completions(@Query() query: Record<string, unknown>, @Caller() caller: string): Promise<UsageCompletionsPage> {
    return this.usage.completions({ ...parseUsageQuery(query), apiKeyIds: new Set([caller]) });
  }
}
