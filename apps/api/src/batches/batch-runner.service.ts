import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import type { BatchError } from '@conveyor/openai';
import {
  batchDoneKey,
  batchInflightKey,
  batchLeaseKey,
  batchLineJobId,
  batchResultsKey,
  type BatchLineResult,
  type QueuedJobData,
} from '@conveyor/queue';
import { DeploymentRegistry } from '../models/deployment-registry.service.js';
import { ChatQueue } from '../queue/chat-queue.port.js';
import { readInputLines, type InputLine } from './batch-input.reader.js';
import { parseBatchLine } from './batch-line.parser.js';
import { notRunLine, toJsonl, toOutputLine } from './batch-output.mapper.js';
import type { BatchRecord } from './batch-record.js';
import { BatchRepository } from './batch.repository.js';

const MAX_REPORTED_ERRORS = 100;
const COLLECT_CHUNK = 256;
const now = () => Math.floor(Date.now() / 1000);

interface Inflight {
  customId: string;
  deployment: string;
}

/**
 * Drives batches: validates the input file, keeps a bounded number of each
 * batch's lines in the queue (the rest stay in the file), writes results as
 * they arrive, and finishes, cancels or expires the batch. One API replica
 * drives a batch at a time, by holding its lease.
 */
@Injectable()
export class BatchRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BatchRunner.name);
  private readonly instance = randomUUID();
  private readonly cursors = new Map<string, AsyncGenerator<InputLine>>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly repo: BatchRepository,
    private readonly store: FileStore,
    private readonly queue: ChatQueue,
    private readonly registry: DeploymentRegistry,
  ) {}

  private get redis() {
    return this.repo.redis;
  }

  private get prefix() {
    return this.config.redis.prefix;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = null));
    }, this.config.batch.tickMs);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    for (const cursor of this.cursors.values()) await cursor.return(undefined);
  }

  private async tick(): Promise<void> {
    try {
      for (const id of await this.repo.active()) {
        if (await this.holdLease(id)) await this.step(id);
      }
    } catch (err) {
      this.logger.warn(`Batch runner: ${(err as Error).message}`);
    }
  }

  private async holdLease(id: string): Promise<boolean> {
    const key = batchLeaseKey(this.prefix, id);
    const ttl = Math.max(5000, this.config.batch.tickMs * 20);
    if ((await this.redis.set(key, this.instance, 'PX', ttl, 'NX')) === 'OK') return true;
    if ((await this.redis.get(key)) !== this.instance) return false;
    await this.redis.pexpire(key, ttl);
    return true;
  }

  private async step(id: string): Promise<void> {
    const batch = await this.repo.get(id);
    if (!batch) return this.repo.retire(id);
    if (batch.status === 'validating') return this.validate(batch);
    if (batch.status === 'in_progress' || batch.status === 'cancelling') return this.drive(batch);
    await this.finishWith(batch.id);
  }

  /** Streams the whole input file once: every line must be runnable before any is queued. */
  private async validate(batch: BatchRecord): Promise<void> {
    const errors: BatchError[] = [];
    let errorCount = 0;
    const seen = new Set<string>();
    let total = 0;
    const find = (model: string) => this.registry.all.find((d) => d.id === model);
    for await (const { line, text } of readInputLines(await this.store.read(batch.input_file_id))) {
      total++;
      const parsed = parseBatchLine(text, line, batch.endpoint, find);
      let error = parsed.ok ? null : parsed.error;
      if (parsed.ok) {
        if (seen.has(parsed.value.customId)) {
          error = { code: 'duplicate_custom_id', message: `Line ${line}: custom_id '${parsed.value.customId}' is used more than once.`, param: 'custom_id', line };
        }
        seen.add(parsed.value.customId);
      }
      if (error && errorCount++ < MAX_REPORTED_ERRORS) errors.push(error);
    }
    if (total > this.config.batch.maxLines) {
      errors.unshift({ code: 'too_many_lines', message: `The file has ${total} lines; a batch may have at most ${this.config.batch.maxLines}.`, param: null, line: null });
    }
    if (total === 0) errors.push({ code: 'empty_file', message: 'The input file has no requests.', param: null, line: null });
    if (errorCount > MAX_REPORTED_ERRORS) {
      errors.push({ code: 'too_many_errors', message: `${errorCount - MAX_REPORTED_ERRORS} more invalid lines are not listed.`, param: null, line: null });
    }
    const latest = await this.repo.get(batch.id);
    if (errors.length) {
      await this.repo.update(batch.id, { status: 'failed', failed_at: now(), errors, total });
      return this.finishWith(batch.id);
    }
    const output = await this.store.create({ filename: `${batch.id}_output.jsonl`, purpose: 'batch_output', owner: batch.owner });
    // Results are written as lines finish, so the output file exists (and can be read) from the start.
    await this.repo.update(batch.id, { status: latest?.cancel_requested ? 'cancelling' : 'in_progress', in_progress_at: now(), total, output_file_id: output.id });
  }

  private async drive(batch: BatchRecord): Promise<void> {
    await this.collect(batch);
    const stop = batch.cancel_requested ? 'batch_cancelled' : Date.now() >= batch.expires_at * 1000 ? 'batch_expired' : null;
    if (stop) return this.drain(batch, stop);
    const inflight = await this.redis.hlen(batchInflightKey(this.prefix, batch.id));
    const fed = await this.feed(batch, this.config.batch.inflightPerBatch - inflight);
    if (fed.exhausted && inflight + fed.count === 0 && (await this.redis.llen(batchResultsKey(this.prefix, batch.id))) === 0) {
      await this.repo.update(batch.id, { status: 'finalizing', finalizing_at: now() });
      await this.repo.update(batch.id, { status: 'completed', completed_at: now() });
      await this.finishWith(batch.id);
    }
  }

  /** Tops this batch's lines in the queue up to `room`, reading on in the input file. */
  private async feed(batch: BatchRecord, room: number): Promise<{ count: number; exhausted: boolean }> {
    // With the window full, nothing to read and nothing to record: no Redis write this tick.
    if (room <= 0) return { count: 0, exhausted: false };
    let cursor = this.cursors.get(batch.id);
    if (!cursor) {
      cursor = readInputLines(await this.store.read(batch.input_file_id), batch.fed_line);
      this.cursors.set(batch.id, cursor);
    }
    let count = 0;
    let lastLine = batch.fed_line;
    while (count < room) {
      const next = await cursor.next();
      if (next.done) {
        this.cursors.delete(batch.id);
        if (count) await this.repo.update(batch.id, { fed_line: lastLine });
        return { count, exhausted: true };
      }
      const { line, text } = next.value;
      const parsed = parseBatchLine(text, line, batch.endpoint, (m) => this.registry.all.find((d) => d.id === m));
      lastLine = line;
      if (!parsed.ok) continue; // validated before; a line that changed meaning since is skipped, not run
      const { customId, body, deployment } = parsed.value;
      const requestId = batchLineJobId(batch.id, line);
      const job: QueuedJobData = { ...body.toJob(requestId, deployment), batch: { batchId: batch.id, customId, line } };
      const entry: Inflight = { customId, deployment: deployment.id };
      await this.redis.hset(batchInflightKey(this.prefix, batch.id), String(line), JSON.stringify(entry));
      await this.queue.enqueue(job);
      count++;
    }
    await this.repo.update(batch.id, { fed_line: lastLine });
    return { count, exhausted: false };
  }

  /** Writes finished lines to the output and error files; a line retried after a worker died is written once. */
  private async collect(batch: BatchRecord): Promise<void> {
    const key = batchResultsKey(this.prefix, batch.id);
    for (;;) {
      const items = await this.redis.lrange(key, 0, COLLECT_CHUNK - 1);
      if (!items.length) return;
      const ok: BatchLineResult[] = [];
      const failed: BatchLineResult[] = [];
      for (const item of items) {
        const result = JSON.parse(item) as BatchLineResult;
        const first = await this.redis.sadd(batchDoneKey(this.prefix, batch.id), result.customId);
        await this.redis.hdel(batchInflightKey(this.prefix, batch.id), String(result.line));
        if (first) (result.ok ? ok : failed).push(result);
      }
      if (ok.length) await this.store.append(batch.output_file_id as string, toJsonl(ok.map((r) => toOutputLine(r, batch.endpoint))));
      if (failed.length) await this.store.append(await this.errorFile(batch), toJsonl(failed.map((r) => toOutputLine(r, batch.endpoint))));
      await this.repo.count(batch.id, 'completed', ok.length);
      await this.repo.count(batch.id, 'failed', failed.length);
      await this.redis.ltrim(key, items.length, -1);
      if (items.length < COLLECT_CHUNK) return;
    }
  }

  private async errorFile(batch: BatchRecord): Promise<string> {
    if (batch.error_file_id) return batch.error_file_id;
    const file = await this.store.create({ filename: `${batch.id}_errors.jsonl`, purpose: 'batch_output', owner: batch.owner });
    batch.error_file_id = file.id;
    await this.repo.update(batch.id, { error_file_id: file.id });
    return file.id;
  }

  /**
   * Cancel or expiry: lines still waiting are taken back, lines running
   * finish, and once none is in flight every line that did not run gets an
   * error line with `code`.
   */
  private async drain(batch: BatchRecord, code: 'batch_cancelled' | 'batch_expired'): Promise<void> {
    if (code === 'batch_cancelled' && batch.status !== 'cancelling') {
      await this.repo.update(batch.id, { status: 'cancelling', cancelling_at: batch.cancelling_at ?? now() });
    }
    const inflightKey = batchInflightKey(this.prefix, batch.id);
    const notRun: string[] = [];
    for (const [line, value] of Object.entries(await this.redis.hgetall(inflightKey))) {
      const entry = JSON.parse(value) as Inflight;
      if (await this.queue.withdraw(entry.deployment, batchLineJobId(batch.id, Number(line)))) {
        if (await this.redis.sadd(batchDoneKey(this.prefix, batch.id), entry.customId)) notRun.push(entry.customId);
        await this.redis.hdel(inflightKey, line);
      }
    }
    if (await this.redis.hlen(inflightKey)) {
      if (notRun.length) await this.store.append(await this.errorFile(batch), toJsonl(notRun.map((c) => notRunLine(c, code))));
      return;
    }
    await this.cursors.get(batch.id)?.return(undefined);
    this.cursors.delete(batch.id);
    for await (const { text } of readInputLines(await this.store.read(batch.input_file_id), batch.fed_line)) {
      const customId = (JSON.parse(text) as { custom_id: string }).custom_id;
      if (await this.redis.sadd(batchDoneKey(this.prefix, batch.id), customId)) notRun.push(customId);
      if (notRun.length >= COLLECT_CHUNK) {
        await this.store.append(await this.errorFile(batch), toJsonl(notRun.splice(0).map((c) => notRunLine(c, code))));
      }
    }
    if (notRun.length) await this.store.append(await this.errorFile(batch), toJsonl(notRun.map((c) => notRunLine(c, code))));
    await this.repo.update(batch.id, code === 'batch_cancelled' ? { status: 'cancelled', cancelled_at: now() } : { status: 'expired', expired_at: now() });
    await this.finishWith(batch.id);
  }

  private async finishWith(id: string): Promise<void> {
    this.cursors.delete(id);
    await this.repo.retire(id);
    // Only the record and the files remain: per-line bookkeeping leaves Redis with the batch.
    await this.redis.del(batchDoneKey(this.prefix, id), batchInflightKey(this.prefix, id), batchResultsKey(this.prefix, id), batchLeaseKey(this.prefix, id));
  }
}
