import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { ListPage, ResponseDeleted, ResponseListedItem, ResponseObject } from '@conveyor/openai';
import { ResponseRequestDto } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { streamReply } from '../generation/reply-stream.js';
import { BackgroundResponses } from './background-responses.js';
import { openAiResponses } from './openai-responses.dialect.js';
import { ResponseEventFormatter } from './response-events.mapper.js';
import {
  DEFAULT_ECHO,
  RESPONSE_ID_PREFIX,
  echoFromResponse,
  type OutputOptions,
  type ResponseEcho,
} from './response.mapper.js';
import { ResponsesService } from './responses.service.js';

/** The query of `GET /v1/responses/{id}`: the response, or (`stream=true`) its stream from a point. */
export interface RetrieveQuery {
  stream?: string;
  starting_after?: string;
}

/** The query of `GET /v1/responses/{id}/input_items`: a page of the input items. */
export interface InputItemsQuery {
  limit?: string;
  order?: string;
  after?: string;
}

function eventNumber(raw: string | undefined, param: string): number {
  if (raw === undefined) return -1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < -1)
    throw OpenAiHttpError.invalidRequest(`${param} must be the sequence_number of the last event received.`, param);
  return n;
}

/**
 * The HTTP shape of the Responses API, shared by `/v1/responses` and the hosted app form: a response
 * object, its Server-Sent Events when `stream` is true, or a queued response when `background` is.
 */
@Injectable()
export class ResponsesHttpHandler {
  constructor(
    private readonly responses: ResponsesService,
    private readonly background: BackgroundResponses,
    private readonly http: HttpGeneration,
  ) {}

  async create(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    only?: DeploymentConfig,
  ): Promise<ResponseObject | void> {
    // A background response outlives its request: the deadline its headers set (an SDK's timeout) is not its.
    const { dto, signal, identify, deadlineMs } = this.http.accept(reply, () => parseRequest(ResponseRequestDto, body));
    const name = (response: { id: string }, headers?: Record<string, string>) =>
      identify(response.id.slice(RESPONSE_ID_PREFIX.length), headers);
    if (dto.background) {
      const response = await this.background.start(dto, caller, only);
      name(response);
      return response;
    }
    const recorded = await this.responses.start(dto, { caller, signal, only, deadlineMs });
    name(recorded.run.who, recorded.run.headers);
    if (!dto.stream) return recorded.drain();
    try {
      await this.stream(recorded.run, recorded.echo, reply, -1, recorded.started.options);
    } finally {
      // A stream that ended itself before the reply did (a reply that had to start over) stores it as failed.
      await recorded.close();
    }
  }

  /** A stored response; with `stream=true`, its events after `starting_after` (or Last-Event-ID), then the live ones. */
  async retrieve(
    id: string,
    query: RetrieveQuery,
    lastEventId: string | undefined,
    caller: string,
    reply: FastifyReply,
  ): Promise<ResponseObject | void> {
    if (query.stream !== 'true') {
      const stored = await this.responses.owned(id, caller);
      // A background response whose follower is gone is taken over here, by the replica its client polls.
      this.background.adopt(stored);
      return stored.response;
    }
    const after = eventNumber(query.starting_after ?? lastEventId, 'starting_after');
    const run = await this.responses.resume(id, caller, this.http.accept(reply).signal);
    const stored = await this.responses.find(id, caller);
    await this.stream(run, stored ? echoFromResponse(stored) : DEFAULT_ECHO, reply, after);
  }

  delete(id: string, caller: string): Promise<ResponseDeleted> {
    return this.responses.delete(id, caller);
  }

  cancel(id: string, caller: string): Promise<ResponseObject> {
    return this.responses.cancel(id, caller, (running) => this.background.stop(running));
  }

  /** A response's input items, a page at a time, as OpenAI lists them (newest first unless `order=asc`). */
  async inputItems(id: string, query: InputItemsQuery, caller: string): Promise<ListPage<ResponseListedItem>> {
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw OpenAiHttpError.invalidRequest('limit must be an integer from 1 to 100.', 'limit');
    if (query.order !== undefined && query.order !== 'asc' && query.order !== 'desc')
      throw OpenAiHttpError.invalidRequest('order must be "asc" or "desc".', 'order');
    const items = await this.responses.inputItems(id, caller);
    const ordered = query.order === 'asc' ? items : [...items].reverse();
    const from = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
    if (from === 0 && query.after !== undefined)
      throw OpenAiHttpError.invalidRequest(`No input item '${query.after.slice(0, 80)}' in this response.`, 'after');
    const data = ordered.slice(from, from + limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: from + limit < ordered.length,
    };
  }

  private async stream(
    run: ReplyRun,
    echo: ResponseEcho,
    reply: FastifyReply,
    after: number,
    options: OutputOptions = {},
  ): Promise<void> {
    const formatter = new ResponseEventFormatter(run.who, echo, options);
    await streamReply(run, reply, formatter, { numbered: true, after, framing: openAiResponses.framing });
  }
}
