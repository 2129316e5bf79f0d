import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { ApiKeyDeleted, ApiKeyList, ApiKeyObject } from '@conveyor/openai';
import { AdminKeyGuard } from '../admin/admin-key.guard.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { CreateApiKeyDto, UpdateApiKeyDto } from './api-key-body.dto.js';
import { ApiKeysService } from './api-keys.service.js';

const KEY_OBJECT =
  '`{object: "api_key", name, source, redacted_value, created_at, rateLimit, tokenLimit, tiers, weight, deadlineMs, webhook}`';

/**
 * API keys made while the platform runs, behind the admin key: every replica accepts a new key, and
 * refuses a revoked or rotated one, within half a second. Keys from configuration are listed, read-only.
 */
@Controller('v1/admin/keys')
@UseGuards(AdminKeyGuard)
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @ApiRoute('Create an API key; the answer holds the key itself, shown this once (admin key)', {
    auth: 'Bearer',
    errors: [400, 401, 404, 409],
  })
  @ApiJsonBody(CreateApiKeyDto)
  @ApiJsonOk(`${KEY_OBJECT} with \`key\``)
  @HttpCode(200)
  create(@Body() body: unknown): Promise<ApiKeyObject> {
    return this.keys.create(body);
  }

  @Get()
  @ApiRoute('Every API key: run-time ones and those from configuration, never the keys (admin key)', {
    auth: 'Bearer',
    errors: [401, 404],
  })
  @ApiJsonOk(`\`{object: "list", data: [${KEY_OBJECT}]}\``)
  list(): Promise<ApiKeyList> {
    return this.keys.list();
  }

  @Get(':name')
  @ApiRoute('An API key, by name (admin key)', { auth: 'Bearer', errors: [401, 404] })
  @ApiParam({ name: 'name', description: "The key's name" })
  @ApiJsonOk(KEY_OBJECT)
  get(@Param('name') name: string): Promise<ApiKeyObject> {
    return this.keys.get(name);
  }

  @Post(':name')
  @ApiRoute("Change a run-time key's settings: a field given is set, one given as null removed (admin key)", {
    auth: 'Bearer',
    errors: [400, 401, 403, 404],
  })
  @ApiParam({ name: 'name', description: "The key's name" })
  @ApiJsonBody(UpdateApiKeyDto)
  @ApiJsonOk(KEY_OBJECT)
  @HttpCode(200)
  update(@Param('name') name: string, @Body() body: unknown): Promise<ApiKeyObject> {
    return this.keys.update(name, body);
  }

  @Post(':name/rotate')
  @ApiRoute('A new key for the same name and settings; the old key is refused from now on (admin key)', {
    auth: 'Bearer',
    errors: [401, 403, 404],
  })
  @ApiParam({ name: 'name', description: "The key's name" })
  @ApiJsonOk(`${KEY_OBJECT} with the new \`key\``)
  @HttpCode(200)
  rotate(@Param('name') name: string): Promise<ApiKeyObject> {
    return this.keys.rotate(name);
  }

  @Delete(':name')
  @ApiRoute('Revoke a run-time key: every replica refuses it within half a second (admin key)', {
    auth: 'Bearer',
    errors: [401, 403, 404],
  })
  @ApiParam({ name: 'name', description: "The key's name" })
  @ApiJsonOk('`{object: "api_key.deleted", name, deleted: true}`')
  delete(@Param('name') name: string): Promise<ApiKeyDeleted> {
    return this.keys.revoke(name);
  }
}
