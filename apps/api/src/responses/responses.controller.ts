import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ListPage, ResponseDeleted, ResponseListedItem, ResponseObject } from '@conveyor/openai';
import { ResponseRequestDto } from '@conveyor/protocol';
import { ApiHeader, ApiParam, ApiQuery } from '@nestjs/swagger';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiResponseOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { ResponsesHttpHandler, type InputItemsQuery, type RetrieveQuery } from './responses-http.handler.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { openAiResponses } from './openai-responses.dialect.js';

/** The OpenAPI parameters of `GET /responses/{id}` (also on the hosted app form). */
export const RetrieveResponseDocs = () =>
  applyDecorators(
    ApiParam({ name: 'id', description: 'resp_…' }),
    ApiQuery({ name: 'stream', required: false, description: 'true: the response as events, live while it runs' }),
    ApiQuery({
      name: 'starting_after',
      required: false,
      description: 'stream: send the events after this sequence_number',
    }),
    ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Same as starting_after' }),
    ApiResponseOrEvents(),
  );

/**
 * The OpenAPI parameters of `GET /responses/{id}/input_items` (also on the hosted app form), in the order the
 * document has always listed them.
 */
export const InputItemsDocs = () =>
  applyDecorators(
    ApiParam({ name: 'id', description: 'resp_…' }),
    ApiQuery({ name: 'after', required: false }),
    ApiQuery({ name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } }),
    ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } }),
    ApiJsonOk('A list of input items'),
  );

/** OpenAI's Responses API: create, retrieve (or resume streaming), delete, cancel, list input items. */
@Controller(openAiResponses.route)
@UseAuthScheme('Bearer')
@Speaks(openAiResponses)
export class ResponsesController {
  constructor(private readonly http: ResponsesHttpHandler) {}

  @Post()
  @HttpCode(200)
  @ApiRoute('Create a response (sync, SSE, or background)', {
    auth: 'Bearer',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ResponseRequestDto)
  @ApiResponseOrEvents()
  create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ResponseObject | void> {
    return this.http.create(body, caller, reply);
  }

  @Get(':id')
  @ApiRoute('A stored response, or its events with stream=true', { auth: 'Bearer', errors: [400, 401, 404] })
  @RetrieveResponseDocs()
  retrieve(
    @Param('id') id: string,
    @Query() query: RetrieveQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ResponseObject | void> {
    return this.http.retrieve(id, query, lastEventId, caller, reply);
  }

  @Delete(':id')
  @ApiRoute('Delete a stored response', { auth: 'Bearer', errors: [401, 404] })
  @ApiParam({ name: 'id', description: 'resp_…' })
  @ApiJsonOk('The deleted response')
  delete(@Param('id') id: string, @Caller() caller: string): Promise<ResponseDeleted> {
    return this.http.delete(id, caller);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiRoute('Cancel a background response', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'resp_…' })
  @ApiJsonOk('The response')
  cancel(@Param('id') id: string, @Caller() caller: string): Promise<ResponseObject> {
    return this.http.cancel(id, caller);
  }

  @Get(':id/input_items')
  @ApiRoute("A stored response's input items", { auth: 'Bearer', errors: [400, 401, 404] })
  @InputItemsDocs()
  inputItems(
    @Param('id') id: string,
    @Query() query: InputItemsQuery,
    @Caller() caller: string,
  ): Promise<ListPage<ResponseListedItem>> {
    return this.http.inputItems(id, query, caller);
  }
}
