/**
 * In-memory stand-ins for the ports the batch runner and its collaborators use, with the semantics that
 * matter to them (a commit all or nothing and fenced by the lease, parts written by number, a queue
 * that can lose a job), and a batch endpoint that needs no model. Longer than most files: each fake is
 * small, and splitting them apart would scatter what one test file reads together.
 */
import { Readable } from 'node:stream';
import { FileNotFoundError, FileStore, newFileId, type NewFile, type StoredFile } from '@conveyor/batch-store';
import type { BatchOutputLine } from '@conveyor/openai';
import type { BatchLineResult, ImageRef, QueuedJobData } from '@conveyor/queue';
import type { BatchEndpoint, BatchEndpoints } from '../../apps/api/src/contracts/batch-endpoint.js';
import { OPENAI_BATCH_RESULTS } from '../../apps/api/src/dialects/openai-batch.dialect.js';
import { JobQueue, type JobCounts } from '../../apps/api/src/contracts/job-queue.port.js';
import {
  BatchLines,
  type CollectedResults,
  type InflightLine,
} from '../../apps/api/src/repositories/batch-lines.port.js';
import { endedEvent, type BatchEnding, type BatchRecord } from '../../apps/api/src/repositories/batch-record.js';
import { BatchRecords, type BatchCounter } from '../../apps/api/src/repositories/batch-records.port.js';
import { BatchShares, type ShareRequest } from '../../apps/api/src/repositories/batch-shares.port.js';
import { ImageStore } from '../../apps/api/src/repositories/image-store.port.js';
import { LiveWorkers } from '../../apps/api/src/repositories/live-workers.port.js';
import { StoreIdentities } from '../../apps/api/src/repositories/store-identities.port.js';
import { UnqueuedLines } from '../../apps/api/src/repositories/unqueued-lines.port.js';
import { WorkerRoutes, type RoutePick } from '../../apps/api/src/repositories/worker-routes.port.js';
import { FileExpiries } from '../../apps/api/src/repositories/file-expiries.port.js';
import type { BodyStream } from '../../apps/api/src/http/streamed-body.js';
import {
  WebhookOutbox,
  type WebhookDelivery,
  type WebhookDeliveryState,
} from '../../apps/api/src/webhooks/webhook-outbox.port.js';

export const MODEL = 'conveyor-tiny';

/** A JSON body as a route that reads its own body gets it: a stream, as sent with its length. */
export function jsonBodyStream(value: unknown): BodyStream {
  const bytes = Buffer.from(JSON.stringify(value));
  return { stream: Readable.from([bytes]), declaredBytes: bytes.length, contentType: 'application/json' };
}

/** Batch records in memory. */
export class MemoryRecords extends BatchRecords {
  readonly records = new Map<string, BatchRecord>();
  readonly activeIds = new Set<string>();
  async create(record: BatchRecord): Promise<void> {
    this.records.set(record.id, { ...record });
    this.activeIds.add(record.id);
  }
  async get(id: string): Promise<BatchRecord | null> {
    const record = this.records.get(id);
    return record ? structuredClone(record) : null;
  }
  async update(id: string, fields: Partial<BatchRecord>): Promise<void> {
    Object.assign(this.records.get(id)!, fields);
  }
  async end(id: string, ending: BatchEnding): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || ['completed', 'failed', 'expired', 'cancelled'].includes(record.status)) return false;
    Object.assign(record, ending, { ended_event: endedEvent(id, ending.status) });
    return true;
  }
  async count(id: string, counter: BatchCounter, by: number): Promise<void> {
    this.records.get(id)![counter] += by;
  }
  async active(): Promise<string[]> {
    return [...this.activeIds];
  }
  async retire(id: string): Promise<void> {
    this.activeIds.delete(id);
  }
  async delete(id: string): Promise<void> {
    this.activeIds.delete(id);
    this.records.delete(id);
  }
  async idsAfter(): Promise<string[]> {
    return [...this.records.keys()];
  }
}

/** File expiries in memory: the first expiry of a file stands. */
export class MemoryExpiries extends FileExpiries {
  readonly at = new Map<string, number>();
  async expire(ids: readonly string[], at: number): Promise<void> {
    for (const id of ids) if (!this.at.has(id)) this.at.set(id, at);
  }
  async expiresAt(ids: readonly string[]): Promise<(number | null)[]> {
    return ids.map((id) => this.at.get(id) ?? null);
  }
  async due(now: number, count: number): Promise<string[]> {
    return [...this.at]
      .filter(([, at]) => at <= now)
      .slice(0, count)
      .map(([id]) => id);
  }
  async forget(id: string): Promise<void> {
    this.at.delete(id);
  }
}

/** The webhook outbox in memory: each event once by its id, as the queue keeps it. */
export class MemoryOutbox extends WebhookOutbox {
  readonly events = new Map<string, WebhookDelivery>();
  async enqueue(delivery: WebhookDelivery): Promise<void> {
    if (!this.events.has(delivery.event.id)) this.events.set(delivery.event.id, delivery);
  }
  /** Queued and never sent: nothing here delivers. */
  async state(eventId: string): Promise<WebhookDeliveryState | null> {
    return this.events.has(eventId) ? { status: 'pending', attempts: 0, lastError: null, finishedAt: null } : null;
  }
}

/** Per-line batch state in memory, with the commit's all-or-nothing semantics and a lease on a clock. */
export class MemoryLines extends BatchLines {
  lease: { holder: string; until: number } | null = null;
  readonly inflightLines = new Map<number, InflightLine>();
  results: BatchLineResult[] = [];
  readonly done = new Set<number>();
  /** Set to make the next commit never happen: the replica died after writing its parts. */
  dieBeforeCommit = false;

  constructor(private readonly records: MemoryRecords) {
    super();
  }
  async holdLease(_batchId: string, holder: string, ttlMs: number): Promise<boolean> {
    if (this.lease && this.lease.holder !== holder && this.lease.until > Date.now()) return false;
    this.lease = { holder, until: Date.now() + ttlMs };
    return true;
  }
  async releaseLease(_batchId: string, holder: string): Promise<void> {
    if (this.lease?.holder === holder) this.lease = null;
  }
  async holdsLease(_batchId: string, holder: string): Promise<boolean> {
    return this.lease?.holder === holder && this.lease.until > Date.now();
  }
  async addInflight(_b: string, line: number, entry: InflightLine): Promise<void> {
    this.inflightLines.set(line, entry);
  }
  async inflightCount(): Promise<number> {
    return this.inflightLines.size;
  }
  async inflightLine(_b: string, line: number): Promise<InflightLine | null> {
    return this.inflightLines.get(line) ?? null;
  }
  async inflight(): Promise<Map<number, InflightLine>> {
    return new Map(this.inflightLines);
  }
  async removeInflight(_b: string, line: number): Promise<void> {
    this.inflightLines.delete(line);
  }
  async pushResult(_b: string, result: BatchLineResult): Promise<void> {
    this.results.push(result);
  }
  async pendingResults(_b: string, count: number): Promise<BatchLineResult[]> {
    return this.results.slice(0, count);
  }
  async pendingResultCount(): Promise<number> {
    return this.results.length;
  }
  async doneAmong(_b: string, lines: readonly number[]): Promise<Set<number>> {
    return new Set(lines.filter((l) => this.done.has(l)));
  }
  async commit(batchId: string, holder: string, c: CollectedResults): Promise<boolean> {
    if (this.dieBeforeCommit) {
      this.dieBeforeCommit = false;
      throw new Error('the replica died');
    }
    if (!(await this.holdsLease(batchId, holder))) return false;
    for (const line of c.written) this.done.add(line);
    for (const line of c.lines) this.inflightLines.delete(line);
    this.results = this.results.slice(c.taken);
    const record = this.records.records.get(batchId)!;
    record.completed += c.completed;
    record.failed += c.failed;
    record.output_parts += c.outputParts;
    record.error_parts += c.errorParts;
    record.prompt_tokens = (record.prompt_tokens ?? 0) + c.tokens.prompt;
    record.cached_tokens = (record.cached_tokens ?? 0) + c.tokens.cached;
    record.folded_tokens = (record.folded_tokens ?? 0) + c.tokens.folded;
    return true;
  }
  async clear(): Promise<void> {
    this.inflightLines.clear();
    this.results = [];
  }
}

/** Files in memory: each a list of numbered parts, read in order. */
export class MemoryFiles extends FileStore {
  readonly files = new Map<string, { meta: StoredFile; parts: Map<number, string> }>();
  /** Set to make part writes fail (the store is away). */
  failWrites = false;
  /** Set to make reads fail for another reason than the file not existing (the store is away). */
  failReads = false;

  put(content: string, owner = 'anonymous'): string {
    const id = newFileId();
    this.files.set(id, {
      meta: { id, filename: 'in.jsonl', purpose: 'batch', owner, createdAt: 0, bytes: 0 },
      parts: new Map([[0, content]]),
    });
    return id;
  }
  async save(file: NewFile, content: AsyncIterable<Buffer | string>): Promise<StoredFile> {
    let text = '';
    for await (const chunk of content) text += chunk.toString();
    return this.get(this.put(text, file.owner));
  }
  async create(file: NewFile): Promise<StoredFile> {
    const id = newFileId();
    this.files.set(id, { meta: { id, ...file, createdAt: 0, bytes: 0 }, parts: new Map() });
    return this.get(id);
  }
  async writePart(id: string, index: number, text: string): Promise<void> {
    if (this.failWrites) throw new Error('the store is unreachable');
    this.file(id).parts.set(index, text);
  }
  private file(id: string) {
    const file = this.files.get(id);
    if (!file) throw new FileNotFoundError(id);
    return file;
  }
  text(id: string | null): string {
    if (!id) return '';
    const parts = this.file(id).parts;
    return [...parts.keys()]
      .sort((a, b) => a - b)
      .map((k) => parts.get(k))
      .join('');
  }
  lines(id: string | null): BatchOutputLine[] {
    return this.text(id)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as BatchOutputLine);
  }
  async get(id: string): Promise<StoredFile> {
    return { ...this.file(id).meta, bytes: Buffer.byteLength(this.text(id)) };
  }
  async list(): Promise<StoredFile[]> {
    return [];
  }
  /** How many times a file was opened for reading, by its id. */
  readonly reads = new Map<string, number>();
  async read(id: string): Promise<Readable> {
    this.reads.set(id, (this.reads.get(id) ?? 0) + 1);
    if (this.failReads) throw new Error('the store is unreachable');
    return Readable.from([this.text(id)]);
  }
  async delete(id: string): Promise<void> {
    this.files.delete(id);
  }
  async identity(): Promise<string> {
    return 'memory';
  }
  readonly marks = new Set<string>();
  async mark(name: string): Promise<void> {
    this.marks.add(name);
  }
  async marked(name: string): Promise<boolean> {
    return this.marks.has(name);
  }
}

/** A queue in memory; `lose` drops a job as a Redis failover could. */
export class MemoryQueue extends JobQueue {
  readonly jobs = new Map<string, QueuedJobData>();
  readonly reachable = true;
  async enqueue(job: QueuedJobData): Promise<void> {
    this.jobs.set(job.requestId, job);
  }
  async cancel(): Promise<boolean> {
    return false;
  }
  onReconnect(): void {}
  async find(requestId: string): Promise<QueuedJobData | null> {
    return this.jobs.get(requestId) ?? null;
  }
  async counts(): Promise<JobCounts> {
    return { waiting: this.jobs.size, batch: 0, active: 0 };
  }
  async countsByState(): Promise<Record<string, number>> {
    return { waiting: this.jobs.size };
  }
  async exists(_d: string, jobId: string): Promise<boolean> {
    return this.jobs.has(jobId);
  }
  async withdraw(_d: string, jobId: string): Promise<boolean> {
    return this.jobs.delete(jobId);
  }
  lose(jobId: string): void {
    this.jobs.delete(jobId);
  }
}

/** Images by hash with the jobs that refer to them, as the Redis scripts keep them. */
export class MemoryImages extends ImageStore {
  readonly jobs = new Map<string, Set<string>>();
  /** The most images held at once. */
  peak = 0;
  async hold(jobId: string, images: readonly { ref: ImageRef }[]): Promise<void> {
    for (const { ref } of images) this.jobs.set(ref.sha256, (this.jobs.get(ref.sha256) ?? new Set()).add(jobId));
    this.peak = Math.max(this.peak, this.jobs.size);
  }
  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    for (const sha of sha256s) {
      this.jobs.get(sha)?.delete(jobId);
      if (!this.jobs.get(sha)?.size) this.jobs.delete(sha);
    }
  }
}

/** Every deployment has `live` workers (none unless set). */
export class NoWorkers extends LiveWorkers {
  live = 0;
  async count(): Promise<number> {
    return this.live;
  }
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, this.live]));
  }
}

/** Unqueued lines per deployment and batch in memory, with the repository's rule: each line counted once, in order. */
export class MemoryUnqueued extends UnqueuedLines {
  /** deployment → batch id → lines left to queue and the last line counted. */
  readonly counts = new Map<string, Map<string, { left: number; through: number }>>();
  async expect(batchId: string, byDeployment: ReadonlyMap<string, number>): Promise<void> {
    for (const [d, left] of byDeployment) {
      if (!this.counts.has(d)) this.counts.set(d, new Map());
      this.counts.get(d)!.set(batchId, { left, through: 0 });
    }
  }
  async queued(batchId: string, deployment: string, lines: readonly number[]): Promise<void> {
    const entry = this.counts.get(deployment)?.get(batchId);
    for (const line of lines) {
      if (!entry || line <= entry.through) continue;
      entry.through = line;
      entry.left = Math.max(0, entry.left - 1);
    }
  }
  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    for (const d of deployments) this.counts.get(d)?.delete(batchId);
  }
  /** Lines of `batchId` for `deployment` not yet queued; undefined once forgotten. */
  left(deployment: string, batchId: string): number | undefined {
    return this.counts.get(deployment)?.get(batchId)?.left;
  }
}

/** Shares that grant up to `room` lines a call (unbounded unless set), keeping what each batch last said. */
export class MemoryShares extends BatchShares {
  room = Infinity;
  /** deployment → batch id → its last request and the lines granted it. */
  readonly entries = new Map<string, Map<string, { request: ShareRequest; granted: number }>>();
  async grant(deployment: string, request: ShareRequest): Promise<number> {
    const granted = Math.min(request.wanted, this.room);
    if (!this.entries.has(deployment)) this.entries.set(deployment, new Map());
    this.entries.get(deployment)!.set(request.batchId, { request, granted });
    return granted;
  }
  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    for (const d of deployments) this.entries.get(d)?.delete(batchId);
  }
}

export class SameStore extends StoreIdentities {
  async hold(identity: string): Promise<string> {
    return identity;
  }
  async release(): Promise<void> {}
}

/** The reference a body's `image` (a stand-in for its bytes) becomes. */
export const imageRef = (image: string): ImageRef => ({
  sha256: image.padStart(64, '0'),
  mime: 'image/png',
  bytes: image.length,
  width: 1,
  height: 1,
});

/** The fake endpoint's body: a `system` and `user` turn become the job's messages; `image` is its one image. */
interface FakeBody {
  model: string;
  image?: string;
  system?: string;
  user?: string;
  /** Absent: 1, so identical lines are fresh draws and each runs (0 or a seed makes them repeats). */
  temperature?: number;
}

/** A batch endpoint that needs no model: the body's text comes back as the reply; a body's `image` is its one image. */
export const endpoint: BatchEndpoint = {
  idPrefix: 'chatcmpl-',
  route: '/v1/chat/completions',
  operation: 'chat',
  parse: (body) => {
    const { model, image, system, user, temperature = 1 } = body as FakeBody;
    const turns = [
      ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
      ...(user === undefined ? [] : [{ role: 'user' as const, content: user }]),
    ];
    return {
      model,
      check: () => undefined,
      toJob: (requestId, deployment) => ({
        requestId,
        deployment: deployment.id,
        messages: image ? [{ role: 'user', content: '', parts: [{ type: 'image', image: imageRef(image) }] }] : turns,
        sampling: { temperature },
        stop: [],
        enqueuedAt: 0,
      }),
      images: () => (image ? [{ ref: imageRef(image), data: Buffer.from(image) }] : []),
    };
  },
  toResponse: (who, reply) => ({ id: who.id, text: reply.choices[0]?.text }),
  batchResults: OPENAI_BATCH_RESULTS,
};
export const endpoints: BatchEndpoints = {
  '/v1/chat/completions': endpoint,
  '/v1/completions': endpoint,
  '/v1/embeddings': endpoint,
  '/v1/rerank': endpoint,
  '/v1/responses': endpoint,
  '/v1/score': endpoint,
  '/v1/messages': endpoint,
};

export const input = (ids: string[], withImages = false) =>
  ids
    .map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: MODEL, ...(withImages ? { image: `${id}abc` } : {}) },
      }),
    )
    .join('\n') + '\n';

/** No worker holds any prompt: every line goes to its deployment's queue. */
export class NoRoutes extends WorkerRoutes {
  async pick(): Promise<RoutePick> {
    return { outcome: 'miss' };
  }
}
