import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion, ModelList } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';
import { DeploymentRegistry } from '../models/deployment-registry.service.js';
import { ModelListService } from '../models/model-list.service.js';

/** The serverless app-host form: OpenAI routes under `/<org_id>/<app_id>/v1`, one deployment per app. */
@Controller(':org/:app/v1')
@UseAuthScheme('Key')
export class OrgAppController {
  constructor(
    private readonly http: ChatHttpHandler,
    private readonly registry: DeploymentRegistry,
    private readonly models: ModelListService,
  ) {}

  @Get('models')
  list(@Param('org') org: string, @Param('app') app: string): Promise<ModelList> {
    return this.models.list([this.registry.requireApp(org, app)]);
  }

  @Post('chat/completions')
  @HttpCode(200)
  create(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion | void> {
    return this.http.handle(body, reply, this.registry.requireApp(org, app));
  }
}
