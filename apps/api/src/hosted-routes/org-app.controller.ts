import { Body, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type {
  ChatCompletion,
  Completion,
  EmbeddingList,
  ListPage,
  ModelList,
  ResponseDeleted,
  ResponseListedItem,
  ResponseObject,
} from '@conveyor/openai';
import { ApiParam } from '@nestjs/swagger';
import type { DeploymentConfig } from '@conveyor/config';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
  ResponseRequestDto,
} from '@conveyor/protocol';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiJsonOrEvents, ApiResponseOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { ResponsesHttpHandler, type InputItemsQuery, type RetrieveQuery } from '../responses/responses-http.handler.js';
import { InputItemsDocs, RetrieveResponseDocs } from '../responses/responses.controller.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';
import { CompletionsHttpHandler } from '../completions/completions-http.handler.js';
import { EmbeddingsHttpHandler } from '../embeddings/embeddings-http.handler.js';
import { ModelListService } from '../models/model-list.service.js';
import { HostedApp, HostedAppController, hostedPath } from './hosted-app.decorator.js';
import { openAiChat } from '../chat/openai-chat.dialect.js';
import { openAiCompletions } from '../completions/openai-completions.dialect.js';
import { openAiEmbeddings } from '../embeddings/openai-embeddings.dialect.js';
import { openAiResponses } from '../responses/openai-responses.dialect.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { OPENAI } from '../dialects/openai.dialect.js';

/** The serverless app-host form: OpenAI routes under `/<org_id>/<app_id>/v1`, one deployment per app. */
@HostedAppController()
@Speaks(OPENAI)
export class OrgAppController {
  constructor(
    private readonly http: ChatHttpHandler,
    private readonly models: ModelListService,
    private readonly completions: CompletionsHttpHandler,
    private readonly embeddings: EmbeddingsHttpHandler,
    private readonly responses: ResponsesHttpHandler,
  ) {}

  @Get('models')
  @ApiRoute("Hosted app form: the app's model (`Key <key>` when private)", { auth: 'Key', errors: [401, 404] })
  @ApiJsonOk('A list of models')
  list(@HostedApp() app: DeploymentConfig): Promise<ModelList> {
    return this.models.list([app]);
  }

  @Post(hostedPath(openAiChat))
  @HttpCode(200)
  @ApiRoute('Hosted app form: chat completion (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ChatCompletionRequestDto)
  @ApiJsonOrEvents('chat.completion')
  create(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion | void> {
    return this.http.handle(body, caller, reply, app);
  }

  @Post(hostedPath(openAiCompletions))
  @HttpCode(200)
  @ApiRoute('Hosted app form: legacy text completion (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(CompletionRequestDto)
  @ApiJsonOrEvents('text_completion')
  complete(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Completion | void> {
    return this.completions.handle(body, caller, reply, app);
  }

  @Post(hostedPath(openAiEmbeddings))
  @HttpCode(200)
  @ApiRoute('Hosted app form: embeddings (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(EmbeddingRequestDto)
  @ApiJsonOk('A list of embeddings')
  embed(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EmbeddingList> {
    return this.embeddings.handle(body, caller, reply, app);
  }

  @Post(hostedPath(openAiResponses))
  @HttpCode(200)
  @ApiRoute('Hosted app form: create a response (`Key <key>` when private)', {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ResponseRequestDto)
  @ApiResponseOrEvents()
  respond(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ResponseObject | void> {
    return this.responses.create(body, caller, reply, app);
  }

  // The stored-response routes check the app exists; a response is its key's wherever it is read.
  @Get('responses/:id')
  @ApiRoute('Hosted app form: a stored response, or its events with stream=true', {
    auth: 'Key',
    errors: [400, 401, 404],
  })
  @RetrieveResponseDocs()
  retrieveResponse(
    @HostedApp() _app: DeploymentConfig,
    @Param('id') id: string,
    @Query() query: RetrieveQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ResponseObject | void> {
    return this.responses.retrieve(id, query, lastEventId, caller, reply);
  }

  @Delete('responses/:id')
  @ApiRoute('Hosted app form: delete a stored response', { auth: 'Key', errors: [401, 404] })
  @ApiParam({ name: 'id', description: 'resp_…' })
  @ApiJsonOk('The deleted response')
  deleteResponse(
    @HostedApp() _app: DeploymentConfig,
    @Param('id') id: string,
    @Caller() caller: string,
  ): Promise<ResponseDeleted> {
    return this.responses.delete(id, caller);
  }

  @Post('responses/:id/cancel')
  @HttpCode(200)
  @ApiRoute('Hosted app form: cancel a background response', { auth: 'Key', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'resp_…' })
  @ApiJsonOk('The response')
  cancelResponse(
    @HostedApp() _app: DeploymentConfig,
    @Param('id') id: string,
    @Caller() caller: string,
  ): Promise<ResponseObject> {
    return this.responses.cancel(id, caller);
  }

  @Get('responses/:id/input_items')
  @ApiRoute("Hosted app form: a stored response's input items", { auth: 'Key', errors: [400, 401, 404] })
  @InputItemsDocs()
  responseInputItems(
    @HostedApp() _app: DeploymentConfig,
    @Param('id') id: string,
    @Query() query: InputItemsQuery,
    @Caller() caller: string,
  ): Promise<ListPage<ResponseListedItem>> {
    return this.responses.inputItems(id, query, caller);
  }
}
