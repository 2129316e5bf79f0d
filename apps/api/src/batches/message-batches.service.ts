import { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import {
  ErrorCode,
  type BatchError,
  type DeletedMessageBatch,
  type MessageBatch,
  type MessageBatchIndividualResponse,
  type MessageBatchList,
} from '@conveyor/openai';
import { isMessageBatchId, newMessageBatchId } from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { errorResult } from '../dialects/anthropic-batch.dialect.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { BATCH_ENDPOINTS, type BatchEndpoints, type BatchResultLine } from '../contracts/batch-endpoint.js';
import { MESSAGE_BATCH_FILES, MESSAGES_URL, newBatchRecord, type BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { readInputLines } from './batch-input.reader.js';
import type { BodyStream } from '../http/streamed-body.js';
import { MessageBatchRequests, type MessageBatchRequest } from './message-batch-requests.parser.js';
import { hasEnded, shownResult, toMessageBatch } from './message-batch.mapper.js';

/** Anthropic's batches end, whatever is left, 24 hours after they are made. */
const EXPIRES_AFTER_S = 24 * 3600;
/** What a request's line in the input file adds to the request: `{"custom_id":…,"method":"POST","url":…,"body":…}`. */
const LINE_OVERHEAD_BYTES = 64;
/** How many ids one read of the batch index takes. */
const INDEX_READ = 100;

const notFound = (id: string) =>
  new OpenAiHttpError(404, 'not_found_error', `No message batch found with id '${id}'.`, 'message_batch_id');
const conflict = (message: string) => new OpenAiHttpError(409, 'invalid_request_error', message, 'message_batch_id');
const invalidId = (id: string, param: string) =>
  OpenAiHttpError.invalidRequest(`Invalid message batch id '${id.slice(0, 80)}'.`, param, ErrorCode.invalidBatchId);

/** Which page of a list: newest first, after one batch (older ones) or before one (newer ones). */
export interface ListQuery {
  limit: number;
  afterId?: string;
  beforeId?: string;
}

/**
 * Anthropic's Message Batches on the batch runner. The requests are checked as `/v1/messages` checks a
 * body, then kept as the runner's input file, one line per request; the runner runs them as it runs an
 * OpenAI batch's lines (same queue, window, priority, exactly one result per custom_id), and the results
 * are read back from its output files in Anthropic's shape. A batch belongs to the key that made it.
 */
@Injectable()
export class MessageBatchesService {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(BATCH_ENDPOINTS) private readonly endpoints: BatchEndpoints,
    private readonly repo: BatchRecords,
    private readonly store: FileStore,
    private readonly registry: DeploymentRegistry,
  ) {}

  async create(owner: string, body: BodyStream): Promise<MessageBatch> {
    const requests = new MessageBatchRequests(
      body,
      this.config.batch.messageBatch,
      this.endpoints[MESSAGES_URL],
      this.findDeployment,
      this.config.api.images,
    );
    const id = newMessageBatchId();
    const input = await this.store.save(
      { filename: `${id}_requests.jsonl`, purpose: MESSAGE_BATCH_FILES, owner },
      // Each request as a line of the runner's input, as an OpenAI batch's input file has it, written as
      // it is read and checked: the first problem throws, and the store keeps nothing of the file.
      inputLines(requests.read()),
      // The lines carry what the body carried, and a few fields more each.
      this.config.batch.messageBatch.maxBytes + LINE_OVERHEAD_BYTES * this.config.batch.messageBatch.maxRequests,
    );
    const { count, foldRepeats } = requests.rest;
    const created = Math.floor(Date.now() / 1000);
    const record: BatchRecord = {
      ...newBatchRecord({
        id,
        owner,
        endpoint: MESSAGES_URL,
        input_file_id: input.id,
        completion_window: '24h',
        metadata: null,
        created_at: created,
        expires_at: created + EXPIRES_AFTER_S,
        // Conveyor's extension, as on OpenAI's batches: false runs every request, repeats too.
        ...(foldRepeats ? {} : { fold_repeats: false }),
      }),
      // Known now: the batch counts its requests as processing from the start.
      total: count,
    };
    await this.repo.create(record);
    return toMessageBatch(record);
  }

  async get(owner: string, id: string): Promise<MessageBatch> {
    return toMessageBatch(await this.record(owner, id));
  }

  async list(owner: string, { limit, afterId, beforeId }: ListQuery): Promise<MessageBatchList> {
    if (afterId !== undefined && !isMessageBatchId(afterId)) throw invalidId(afterId, 'after_id');
    if (beforeId !== undefined && !isMessageBatchId(beforeId)) throw invalidId(beforeId, 'before_id');
    if (afterId !== undefined && beforeId !== undefined) {
      throw OpenAiHttpError.invalidRequest('Send after_id or before_id, not both.', 'before_id');
    }
    const found: MessageBatch[] = [];
    if (beforeId === undefined) {
      // One more than the page, to know whether there is a next one.
      for await (const r of this.owned(owner, afterId)) if (found.push(toMessageBatch(r)) > limit) break;
    } else {
      // The batches newer than `beforeId`, nearest to it last: the page is the `limit` nearest, and one
      // more says whether there are newer ones still.
      let reached = false;
      for await (const r of this.owned(owner, undefined, (id) => (reached = id === beforeId))) {
        if (found.push(toMessageBatch(r)) > limit + 1) found.shift();
      }
      if (!reached) found.length = 0;
    }
    const page = beforeId === undefined ? found.slice(0, limit) : found.slice(-limit);
    return {
      data: page,
      has_more: found.length > limit,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
    };
  }

  /** Lines already running finish; the rest end as canceled once the runner has drained the batch. */
  async cancel(owner: string, id: string): Promise<MessageBatch> {
    const record = await this.record(owner, id);
    if (hasEnded(record)) throw conflict(`Message batch ${id} has already ended and cannot be canceled.`);
    // Canceling from the cancel on, also while the requests are still being read: the runner reads them
    // all the same (to know each custom_id), then writes each as canceled.
    const fields: Partial<BatchRecord> = {
      cancel_requested: true,
      status: 'cancelling',
      cancelling_at: record.cancelling_at ?? Math.floor(Date.now() / 1000),
    };
    await this.repo.update(id, fields);
    return toMessageBatch({ ...record, ...fields });
  }

  /** The batch and its files; only once it has ended, so no replica is writing them. */
  async delete(owner: string, id: string): Promise<DeletedMessageBatch> {
    const record = await this.record(owner, id);
    if (!hasEnded(record)) {
      throw conflict(`Message batch ${id} is still processing: cancel it, and delete it once it has ended.`);
    }
    await this.repo.delete(id);
    for (const file of [record.input_file_id, record.output_file_id, record.error_file_id]) {
      if (!file) continue;
      try {
        await this.store.delete(file);
      } catch (err) {
        if (!(err instanceof FileNotFoundError)) throw err;
      }
    }
    return { id, type: 'message_batch_deleted' };
  }

  /**
   * The results, one JSON line per request, in no particular order: those written to the output file,
   * then those in the error file. Refused before the batch has ended, as Anthropic's are.
   */
  async results(owner: string, id: string): Promise<AsyncGenerator<string>> {
    const record = await this.record(owner, id);
    if (!hasEnded(record)) {
      throw conflict(`Message batch ${id} is still processing; its results can be read once it has ended.`);
    }
    if (record.status === 'failed') return this.failedResults(record);
    const files = [record.output_file_id, record.error_file_id].filter((f): f is string => f !== null);
    // Before the first line is sent: a missing file is an error answer, not a cut-off stream.
    for (const file of files) await this.store.get(file);
    return this.fileResults(files);
  }

  private async *fileResults(files: string[]): AsyncGenerator<string> {
    for (const file of files) {
      for await (const { text } of readInputLines(await this.store.read(file))) {
        yield line(shownResult(JSON.parse(text) as BatchResultLine));
      }
    }
  }

  /** A batch the runner refused as a whole (its input could not be run after all): every request errored. */
  private async *failedResults(record: BatchRecord): AsyncGenerator<string> {
    const byLine = new Map<number, BatchError>();
    for (const error of record.errors ?? []) if (error.line !== null) byLine.set(error.line, error);
    const general = record.errors?.find((e) => e.line === null);
    let stream: Readable;
    try {
      stream = await this.store.read(record.input_file_id);
    } catch (err) {
      if (err instanceof FileNotFoundError) return;
      throw err;
    }
    for await (const { line: number, text } of readInputLines(stream)) {
      const { custom_id } = JSON.parse(text) as { custom_id: string };
      const error = byLine.get(number) ?? general;
      const status = error && error.code !== ErrorCode.inputFileUnreadable ? 400 : 500;
      const message = error?.message ?? 'The batch failed before this request ran.';
      yield line({ custom_id, result: { type: 'errored', error: errorResult(status, message, error?.code ?? null) } });
    }
  }

  /** The caller's batch: another key's, or an OpenAI batch, is reported exactly like a missing one. */
  private async record(owner: string, id: string): Promise<BatchRecord> {
    if (!isMessageBatchId(id)) throw invalidId(id, 'message_batch_id');
    const record = await this.repo.get(id);
    if (!record || record.owner !== owner || record.endpoint !== MESSAGES_URL) throw notFound(id);
    return record;
  }

  /** The caller's Message Batches, newest first, after `afterId` (or from the newest), up to the id `stop` is true of. */
  private async *owned(owner: string, afterId?: string, stop?: (id: string) => boolean): AsyncGenerator<BatchRecord> {
    let cursor = afterId;
    for (;;) {
      const ids = await this.repo.idsAfter(cursor, INDEX_READ);
      for (const id of ids) {
        if (stop?.(id)) return;
        // OpenAI's batches share the index; their records are not read.
        if (!isMessageBatchId(id)) continue;
        const r = await this.repo.get(id);
        if (r && r.owner === owner && r.endpoint === MESSAGES_URL) yield r;
      }
      if (ids.length < INDEX_READ) return;
      cursor = ids.at(-1);
    }
  }

  private readonly findDeployment = (model: string): DeploymentConfig | undefined => this.registry.find(model);
}

const line = (result: MessageBatchIndividualResponse): string => JSON.stringify(result) + '\n';

async function* inputLines(requests: AsyncIterable<MessageBatchRequest>): AsyncGenerator<string> {
  for await (const { custom_id, params } of requests) {
    yield JSON.stringify({ custom_id, method: 'POST', url: MESSAGES_URL, body: params }) + '\n';
  }
}
