import { Inject, Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore, assertFileId } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  ErrorCode,
  type AdminBatch,
  type Batch,
  type BatchEndpointUrl,
  type ListPage,
  type WebhookDeliveryObject,
} from '@conveyor/openai';
import { isBatchId, isMessageBatchId, newBatchId } from '@conveyor/queue';
import { parseExpiresAfter, validateDto } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { isOpenAiBatch, newBatchRecord, type BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { FileExpiries } from '../repositories/file-expiries.port.js';
import { WebhookOutbox } from '../webhooks/webhook-outbox.port.js';
import { toAdminBatch, toBatch } from './batch.mapper.js';
import { CreateBatchDto, windowSeconds } from './create-batch.dto.js';

const notFound = (id: string) =>
  new OpenAiHttpError(404, 'not_found_error', `No batch found with id '${id}'.`, 'batch_id', ErrorCode.batchNotFound);

/** Creating, reading, listing and cancelling batches; the runner does the work. */
@Injectable()
export class BatchesService {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly repo: BatchRecords,
    private readonly store: FileStore,
    private readonly expiries: FileExpiries,
    private readonly outbox: WebhookOutbox,
  ) {}

  async create(owner: string, body: unknown): Promise<Batch> {
    const result = validateDto(CreateBatchDto, body);
    if (!result.ok) throw OpenAiHttpError.invalidRequest(result.problem.message, result.problem.param);
    const dto = result.value;
    const outputTtl = this.outputTtl(dto.output_expires_after);
    const file = await this.store.getOwned(assertFileId(dto.input_file_id), owner);
    // An expired upload is gone, as the Files API says, even before it is removed from the store.
    const [inputExpires] = await this.expiries.expiresAt([file.id]);
    if (inputExpires != null && inputExpires <= Math.floor(Date.now() / 1000)) throw new FileNotFoundError(file.id);
    if (file.purpose !== 'batch')
      throw OpenAiHttpError.invalidRequest(`File ${file.id} was not uploaded with purpose "batch".`, 'input_file_id');
    // Its size was checked with the body (MetadataConstraint), as a response's is.
    const metadata = dto.metadata ?? null;
    const created = Math.floor(Date.now() / 1000);
    const record = newBatchRecord({
      id: newBatchId(),
      owner,
      endpoint: dto.endpoint,
      input_file_id: file.id,
      completion_window: dto.completion_window,
      metadata,
      created_at: created,
      expires_at: created + windowSeconds(dto.completion_window),
      ...(outputTtl === null ? {} : { output_ttl_s: outputTtl }),
      ...(dto.fold_repeats === false ? { fold_repeats: false } : {}),
    });
    await this.repo.create(record);
    return toBatch(record);
  }

  /** `output_expires_after`'s seconds, or null when the batch has none. */
  private outputTtl(value: unknown): number | null {
    if (value === undefined || value === null) return null;
    const parsed = parseExpiresAfter(value, 'output_expires_after', this.config.batch.outputExpiryMinSeconds);
    if (!parsed.ok) throw OpenAiHttpError.invalidRequest(parsed.message, 'output_expires_after');
    return parsed.seconds;
  }

  private async record(owner: string, id: string): Promise<BatchRecord & { endpoint: BatchEndpointUrl }> {
    if (!isBatchId(id))
      throw OpenAiHttpError.invalidRequest(
        `Invalid batch id '${id.slice(0, 80)}'.`,
        'batch_id',
        ErrorCode.invalidBatchId,
      );
    const record = await this.repo.get(id);
    // Another key's batch is reported exactly like a missing one.
    if (!record || record.owner !== owner || !isOpenAiBatch(record)) throw notFound(id);
    return record;
  }

  async get(owner: string, id: string): Promise<Batch> {
    return toBatch(await this.record(owner, id));
  }

  /**
   * The deliveries of the batch's events to its owner's webhook: its one event, once it has ended and the
   * owner has a webhook; none before, or without one.
   */
  async webhookDeliveries(owner: string, id: string): Promise<ListPage<WebhookDeliveryObject>> {
    const event = (await this.record(owner, id)).ended_event;
    const state = event ? await this.outbox.state(event.id) : null;
    const data: WebhookDeliveryObject[] =
      event && state
        ? [
            {
              object: 'webhook_delivery',
              event_id: event.id,
              type: event.type,
              status: state.status,
              attempts: state.attempts,
              last_error: state.lastError,
              finished_at: state.finishedAt === null ? null : Math.floor(state.finishedAt / 1000),
            },
          ]
        : [];
    return {
      object: 'list',
      data,
      first_id: data[0]?.event_id ?? null,
      last_id: data[0]?.event_id ?? null,
      has_more: false,
    };
  }

  async list(owner: string, after: string | undefined, limit: number): Promise<ListPage<Batch>> {
    // Message Batches share the index; only Anthropic's routes show them.
    return this.page(after, limit, (r) => (r.owner === owner && isOpenAiBatch(r) ? toBatch(r) : null));
  }

  /** Every key's batches, Message Batches among them, newest first; `owner` keeps one key's. */
  async listEvery(after: string | undefined, limit: number, owner?: string): Promise<ListPage<AdminBatch>> {
    return this.page(after, limit, (r) => (owner === undefined || r.owner === owner ? toAdminBatch(r) : null));
  }

  /** A page of the batches `shown` answers for (null: not this list's), newest first, after `after`. */
  private async page<T extends { id: string }>(
    after: string | undefined,
    limit: number,
    shown: (r: BatchRecord) => T | null,
  ): Promise<ListPage<T>> {
    const data: T[] = [];
    let cursor = after;
    let more = true;
    while (data.length <= limit && more) {
      const ids = await this.repo.idsAfter(cursor, 100);
      more = ids.length === 100;
      for (const id of ids) {
        const r = await this.repo.get(id);
        const item = r && shown(r);
        if (item) data.push(item);
      }
      cursor = ids.at(-1);
      if (!cursor) break;
    }
    const page = data.slice(0, limit);
    return {
      object: 'list',
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: data.length > limit,
    };
  }

  async cancel(owner: string, id: string): Promise<Batch> {
    const record = await this.record(owner, id);
    return toBatch({ ...record, ...(await this.cancelRecord(record)) });
  }

  /** The admin's cancel of any key's batch, a Message Batch too: the same as its owner's. */
  async cancelAny(id: string): Promise<AdminBatch> {
    if (!isBatchId(id) && !isMessageBatchId(id)) throw notFound(id);
    const record = await this.repo.get(id);
    if (!record) throw notFound(id);
    return toAdminBatch({ ...record, ...(await this.cancelRecord(record)) });
  }

  private async cancelRecord(
    record: BatchRecord,
  ): Promise<Pick<BatchRecord, 'cancel_requested' | 'status' | 'cancelling_at'>> {
    if (!['validating', 'in_progress', 'cancelling'].includes(record.status)) {
      throw OpenAiHttpError.invalidRequest(
        `Batch ${record.id} is ${record.status} and can no longer be cancelled.`,
        'batch_id',
        ErrorCode.batchNotCancellable,
      );
    }
    // Cancelling from the cancel on, as OpenAI answers, also while the input is still being validated:
    // the runner validates it all the same (to know its lines), then drains it to cancelled.
    const cancelling = {
      cancel_requested: true,
      status: 'cancelling' as const,
      cancelling_at: record.cancelling_at ?? Math.floor(Date.now() / 1000),
    };
    await this.repo.update(record.id, cancelling);
    return cancelling;
  }
}
