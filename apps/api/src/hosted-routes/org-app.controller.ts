import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion, Completion, EmbeddingList, ModelList } from '@conveyor/openai';
import { ApiParam } from '@nestjs/swagger';
import { ChatCompletionRequestDto, CompletionRequestDto, EmbeddingRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';
import { CompletionsHttpHandler } from '../completions/completions-http.handler.js';
import { EmbeddingsHttpHandler } from '../embeddings/embeddings-http.handler.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { ModelListService } from '../models/model-list.service.js';

/** The serverless app-host form: OpenAI routes under `/<org_id>/<app_id>/v1`, one deployment per app. */
@Controller(':org/:app/v1')
@UseAuthScheme('Key')
@ApiParam({ name: 'org', description: 'Organisation' })
@ApiParam({ name: 'app', description: 'App' })
export class OrgAppController {
  constructor(
    private readonly http: ChatHttpHandler,
    private readonly registry: DeploymentRegistry,
    private readonly models: ModelListService,
    private readonly completions: CompletionsHttpHandler,
    private readonly embeddings: EmbeddingsHttpHandler,
  ) {}

  @Get('models')
  @ApiRoute("Hosted app form: the app's model (`Key <key>` when private)", { auth: 'Key', errors: [401, 404] })
  @ApiJsonOk('A list of models')
  list(@Param('org') org: string, @Param('app') app: string): Promise<ModelList> {
    return this.models.list([this.registry.requireApp(org, app)]);
  }

  @Post('chat/completions')
  @HttpCode(200)
  @ApiRoute('Hosted app form: chat completion (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ChatCompletionRequestDto)
  @ApiJsonOrEvents('chat.completion')
  create(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion | void> {
    return this.http.handle(body, caller, reply, this.registry.requireApp(org, app));
  }

  @Post('completions')
  @HttpCode(200)
  @ApiRoute('Hosted app form: legacy text completion (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(CompletionRequestDto)
  @ApiJsonOrEvents('text_completion')
  complete(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Completion | void> {
    return this.completions.handle(body, caller, reply, this.registry.requireApp(org, app));
  }

  @Post('embeddings')
  @HttpCode(200)
  @ApiRoute('Hosted app form: embeddings (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(EmbeddingRequestDto)
  @ApiJsonOk('A list of embeddings')
  embed(
    @Param('org') org: string,
    @Param('app') app: string,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EmbeddingList> {
    return this.embeddings.handle(body, caller, reply, this.registry.requireApp(org, app));
  }
}
