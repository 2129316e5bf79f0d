import { Injectable } from '@nestjs/common';
import { ErrorCode, type ResponseInputItem, type ResponseListedItem, type ResponseObject } from '@conveyor/openai';
import type { ResponseRequestDto } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { JobRecall } from '../generation/job-recall.js';
import { GenerationService, type RequestContext } from '../generation/generation.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { ResponseStore, type StoredResponse } from '../repositories/response-store.port.js';
import { ResponseOutcomes, type RecordedResponse, type StartedResponse } from './response-outcomes.service.js';
import { openAiResponses } from './openai-responses.dialect.js';
import { RESPONSE_ID_PREFIX, echoOf, pendingResponse } from './response.mapper.js';

const notFound = (id: string): OpenAiHttpError =>
  new OpenAiHttpError(
    404,
    'not_found_error',
    `No response with id '${id.slice(0, 80)}' is stored for this key (it may have expired).`,
    'response_id',
    ErrorCode.responseNotFound,
  );

const ID_PREFIXES: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  reasoning: 'rs',
};

/** The input items as listed: each with its own id, or one made from the response's. */
function listed(responseId: string, items: readonly ResponseInputItem[]): ResponseListedItem[] {
  const hex = responseId.slice(RESPONSE_ID_PREFIX.length).replaceAll('-', '');
  return items.map((item, i): ResponseListedItem => {
    const id = item.id ?? `${ID_PREFIXES[item.type ?? 'message']}_${hex}_in${i}`;
    return item.type === undefined ? { ...item, type: 'message', id } : { ...item, id };
  });
}

/**
 * The Responses use case over the one generation pipeline: a request continues a stored
 * conversation (`previous_response_id`), is checked against its deployment and queued as a chat
 * job; a stored response (`store`, the default) is kept, for its key alone, as it moves on.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly generation: GenerationService,
    private readonly store: ResponseStore,
    private readonly outcomes: ResponseOutcomes,
    private readonly recall: JobRecall,
  ) {}

  /**
   * Queues the request for its caller; nothing is queued when it is refused. A stored one is saved as
   * `status` (in progress, or queued for a background one) before this returns, just after `beforeStored`;
   * its outcome is stored as its reply is taken, whatever takes it.
   */
  async start(
    dto: ResponseRequestDto,
    request: RequestContext,
    {
      status = 'in_progress',
      beforeStored,
    }: { status?: 'queued' | 'in_progress'; beforeStored?: (id: string) => Promise<void> } = {},
  ): Promise<RecordedResponse> {
    const { caller } = request;
    const deployment = this.generation.deploymentFor(dto.model, request.only);
    dto.continues(await this.continued(dto, caller));
    const run = await this.generation.start(openAiResponses, dto, { ...request, only: deployment });
    const started: StartedResponse = {
      run,
      echo: echoOf(dto),
      conversation: dto.conversation(),
      stored: false,
      options: { encryptReasoning: dto.wantsEncryptedReasoning() },
    };
    if (started.echo.store) {
      const record: StoredResponse = {
        owner: caller,
        response: pendingResponse(run.who, started.echo, status),
        input: listed(run.who.id, dto.items()),
        context: started.conversation,
        deployment: deployment.id,
      };
      await beforeStored?.(run.who.id);
      started.stored = await this.outcomes.begin(record);
    }
    return this.outcomes.record(started);
  }

  /** The conversation a request continues: its `previous_response_id`'s, which must be the caller's; none when it starts one. */
  private async continued(dto: ResponseRequestDto, caller: string): Promise<readonly ResponseInputItem[]> {
    const previous = dto.previous_response_id;
    return previous ? (await this.owned(previous, caller, 'previous_response_id')).context : [];
  }

  /** The caller's stored response; anyone else is told there is none, as files and batches do. */
  async owned(id: string, caller: string, param = 'response_id'): Promise<StoredResponse> {
    const stored = id.startsWith(RESPONSE_ID_PREFIX) ? await this.readStore(id) : null;
    if (!stored || stored.owner !== caller) {
      const error = notFound(id);
      throw new OpenAiHttpError(404, error.type, error.message, param, error.code);
    }
    return stored;
  }

  /** The stored response, if the caller has one by this id: what a resumed stream repeats. */
  async find(id: string, caller: string): Promise<ResponseObject | null> {
    const stored = await this.readStore(id).catch(() => null);
    return stored?.owner === caller ? stored.response : null;
  }

  async delete(id: string, caller: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    await this.owned(id, caller);
    await this.store.delete(id);
    return { id, object: 'response', deleted: true };
  }

  async inputItems(id: string, caller: string): Promise<ResponseListedItem[]> {
    return (await this.owned(id, caller)).input;
  }

  /**
   * Cancels a background response: marks it cancelled (so nothing overwrites that) and stops its
   * job, whichever replica follows it. A finished one is answered as it is.
   */
  async cancel(id: string, caller: string, stopLocal: (id: string) => void): Promise<ResponseObject> {
    const stored = await this.owned(id, caller);
    if (!stored.response.background) {
      throw OpenAiHttpError.invalidRequest(
        'Only background responses can be cancelled.',
        'response_id',
        ErrorCode.responseNotCancellable,
      );
    }
    const cancelled = await this.outcomes.cancelled(stored.response);
    if (!cancelled) return (await this.owned(id, caller)).response;
    stopLocal(id);
    await this.recall.cancel(stored.deployment, id.slice(RESPONSE_ID_PREFIX.length)).catch(() => undefined);
    return cancelled;
  }

  /** Follows a streamed response already under way (or recently finished), for the caller that made it. */
  resume(id: string, caller: string, signal: AbortSignal): Promise<ReplyRun> {
    return this.generation.resume(id, openAiResponses, caller, signal);
  }

  /** Stops following a reply without stopping its job, so another replica may follow it on. */
  letGo(requestId: string): void {
    this.generation.letGo(requestId);
  }

  private readStore(id: string): Promise<StoredResponse | null> {
    return this.store.get(id).catch(() => {
      throw OpenAiHttpError.unavailable('The response store is unreachable; try again shortly.');
    });
  }
}
