import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion, Completion, EmbeddingList, ModelList } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';
import { CompletionsHttpHandler } from '../completions/completions-http.handler.js';
import { EmbeddingsHttpHandler } from '../embeddings/embeddings-http.handler.js';
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
    private readonly completions: CompletionsHttpHandler,
    private readonly embeddings: EmbeddingsHttpHandler,
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

  @Post('completions')
  @HttpCode(200)
  complete(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Completion | void> {
    return this.completions.handle(body, reply, this.registry.requireApp(org, app));
  }

  @Post('embeddings')
  @HttpCode(200)
  embed(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EmbeddingList> {
    return this.embeddings.handle(body, reply, this.registry.requireApp(org, app));
  }
}
