import 'reflect-metadata';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { FileNotFoundError, FileStore, newFileId, type NewFile, type StoredFile } from '@conveyor/batch-store';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import type { BatchOutputLine } from '@conveyor/openai';
import {
  jobImageHashes,
  parseBatchLineJobId,
  type BatchLineResult,
  type ImageRef,
  type QueuedJobData,
} from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import type { BatchEndpoint, BatchEndpoints } from '../generation/batch-endpoint.js';
import { JobQueue, type JobCounts } from '../generation/job-queue.port.js';
import { JobRouting } from '../generation/job-routing.service.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { FileStoreCheck } from '../platform/file-store.check.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { newBatchRecord, type BatchRecord } from '../repositories/batch-record.js';
import { BatchLines, type CollectedResults, type InflightLine } from '../repositories/batch-lines.port.js';
import { BatchRecords, type BatchCounter } from '../repositories/batch-records.port.js';
import { StoreIdentities } from '../repositories/store-identities.port.js';
import { WorkerRoutes, type RoutePick } from '../repositories/worker-routes.port.js';
import { composeBatchRunner } from '../../../../test/support/batch-runner.js';
import type { BatchRunner } from './batch-runner.service.js';

const MODEL = 'conveyor-tiny';

/** Batch records in memory. */
class MemoryRecords extends BatchRecords {
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
  async count(id: string, counter: BatchCounter, by: number): Promise<void> {
    this.records.get(id)![counter] += by;
  }
  async active(): Promise<string[]> {
    return [...this.activeIds];
  }
  async retire(id: string): Promise<void> {
    this.activeIds.delete(id);
  }
  async idsAfter(): Promise<string[]> {
    return [...this.records.keys()];
  }
}

/** Per-line batch state in memory, with the commit's all-or-nothing semantics and a lease on a clock. */
class MemoryLines extends BatchLines {
  lease: { holder: string; until: number } | null = null;
  readonly inflightLines = new Map<number, InflightLine>();
  results: BatchLineResult[] = [];
  readonly done = new Set<string>();
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
  async doneAmong(_b: string, customIds: readonly string[]): Promise<Set<string>> {
    return new Set(customIds.filter((c) => this.done.has(c)));
  }
  async commit(batchId: string, holder: string, c: CollectedResults): Promise<boolean> {
    if (this.dieBeforeCommit) {
      this.dieBeforeCommit = false;
      throw new Error('the replica died');
    }
    if (!(await this.holdsLease(batchId, holder))) return false;
    for (const id of c.customIds) this.done.add(id);
    for (const line of c.lines) this.inflightLines.delete(line);
    this.results = this.results.slice(c.taken);
    const record = this.records.records.get(batchId)!;
    record.completed += c.completed;
    record.failed += c.failed;
    record.output_parts += c.outputParts;
    record.error_parts += c.errorParts;
    return true;
  }
  async clear(): Promise<void> {
    this.inflightLines.clear();
    this.results = [];
  }
}

/** Files in memory: each a list of numbered parts, read in order. */
class MemoryFiles extends FileStore {
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
  /** How many times a file was opened for reading. */
  reads = 0;
  async read(id: string): Promise<Readable> {
    this.reads++;
    if (this.failReads) throw new Error('the store is unreachable');
    return Readable.from([this.text(id)]);
  }
  async delete(id: string): Promise<void> {
    this.files.delete(id);
  }
  async identity(): Promise<string> {
    return 'memory';
  }
}

/** A queue in memory; `lose` drops a job as a Redis failover could. */
class MemoryQueue extends JobQueue {
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
    return { waiting: this.jobs.size, prioritized: 0, active: 0 };
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
class MemoryImages extends ImageStore {
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
class NoWorkers extends LiveWorkers {
  live = 0;
  async count(): Promise<number> {
    return this.live;
  }
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, this.live]));
  }
}

class SameStore extends StoreIdentities {
  async claim(identity: string): Promise<string> {
    return identity;
  }
}

/** The reference a body's `image` (a stand-in for its bytes) becomes. */
const imageRef = (image: string): ImageRef => ({
  sha256: image.padStart(64, '0'),
  mime: 'image/png',
  bytes: image.length,
  width: 1,
  height: 1,
});

/** A batch endpoint that needs no model: the body's text comes back as the reply; a body's `image` is its one image. */
const endpoint: BatchEndpoint = {
  idPrefix: 'chatcmpl-',
  parse: (body) => {
    const { model, image } = body as { model: string; image?: string };
    return {
      model,
      check: () => undefined,
      toJob: (requestId, deployment) => ({
        requestId,
        deployment: deployment.id,
        messages: image ? [{ role: 'user', content: '', parts: [{ type: 'image', image: imageRef(image) }] }] : [],
        sampling: { temperature: 0 },
        stop: [],
        enqueuedAt: 0,
      }),
      images: () => (image ? [{ ref: imageRef(image), data: Buffer.from(image) }] : []),
    };
  },
  toResponse: (who, reply) => ({ id: who.id, text: reply.choices[0]?.text }),
};
const endpoints: BatchEndpoints = {
  '/v1/chat/completions': endpoint,
  '/v1/completions': endpoint,
  '/v1/embeddings': endpoint,
};

const input = (ids: string[], withImages = false) =>
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
class NoRoutes extends WorkerRoutes {
  async pick(): Promise<RoutePick> {
    return { outcome: 'miss' };
  }
}

describe('BatchRunner', () => {
  let config: PlatformConfig;
  let records: MemoryRecords;
  let lines: MemoryLines;
  let files: MemoryFiles;
  let queue: MemoryQueue;
  let metrics: PlatformMetrics;
  let workers: NoWorkers;
  let images: MemoryImages;
  const compose = () =>
    composeBatchRunner({
      config,
      endpoints,
      records,
      lines,
      store: files,
      queue,
      registry: new DeploymentRegistry(config),
      storeCheck: new FileStoreCheck(config, files, new SameStore()),
      metrics,
      routing: new JobRouting(new DeploymentRegistry(config), new NoRoutes(), metrics),
      workers,
      images,
    });
  const runner = () => compose().runner;

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    config = loadConfig({ MODEL: 'tiny', BATCH_INFLIGHT: '4', BATCH_LEASE_MS: '1000' });
    records = new MemoryRecords();
    lines = new MemoryLines(records);
    files = new MemoryFiles();
    queue = new MemoryQueue();
    workers = new NoWorkers();
    images = new MemoryImages();
    metrics = new PlatformMetrics(new DeploymentRegistry(config), queue, workers, records);
  });

  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  async function createBatch(ids: string[], withImages = false, content = input(ids, withImages)): Promise<string> {
    const id = 'batch_0123456789abcdef01234567';
    await records.create(
      newBatchRecord({
        id,
        owner: 'anonymous',
        endpoint: '/v1/chat/completions',
        input_file_id: files.put(content),
        completion_window: '24h',
        metadata: null,
        created_at: 0,
        expires_at: Math.floor(Date.now() / 1000) + 3600,
      }),
    );
    return id;
  }

  /** What workers do: every queued line finishes, its images are released, and its result goes to the batch. */
  async function runQueuedLines(): Promise<void> {
    for (const [jobId, job] of [...queue.jobs]) {
      queue.jobs.delete(jobId);
      await images.release(jobId, jobImageHashes(job));
      const ref = job.batch!;
      await lines.pushResult(ref.batchId, {
        ok: true,
        customId: ref.customId,
        line: ref.line,
        requestId: jobId,
        model: MODEL,
        reply: {
          choices: [{ index: 0, text: `reply ${ref.customId}`, finishReason: 'stop' }],
          usage: { promptTokens: 5, completionTokens: 1, cachedTokens: 3 },
        },
        finishedAt: 1_700_000_000_000,
      });
    }
  }

  async function runToEnd(driver: BatchRunner, id: string, maxTicks = 100): Promise<BatchRecord> {
    for (let i = 0; i < maxTicks && records.activeIds.has(id); i++) {
      await driver.tick();
      await runQueuedLines();
      jest.advanceTimersByTime(100);
    }
    return records.records.get(id)!;
  }

  const writtenIds = (record: BatchRecord) =>
    [...files.lines(record.output_file_id), ...files.lines(record.error_file_id)].map((l) => l.custom_id);

  it('runs every line once, keeping at most BATCH_INFLIGHT in the queue, and completes', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const id = await createBatch(ids);
    const driver = runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds the window
    expect(queue.jobs.size).toBe(4);
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', total: 10, completed: 10, failed: 0 });
    expect(writtenIds(record).sort()).toEqual([...ids].sort());
    expect(files.lines(record.output_file_id)[0]?.response?.body).toMatchObject({ text: 'reply r0' });
    // Each written line's prompt is counted once: what its worker computed, and what its prompt cache reused.
    const counted = (await metrics.promptTokens.get()).values;
    expect(counted.find((v) => v.labels.source === 'cached')?.value).toBe(30);
    expect(counted.find((v) => v.labels.source === 'computed')?.value).toBe(20);
  });

  it('reads the input twice in a batch that runs to the end: once to validate it, once to feed it', async () => {
    const id = await createBatch(Array.from({ length: 6 }, (_, i) => `r${i}`));
    const driver = runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds r0..r3
    await runQueuedLines();
    await driver.tick(); // feeds r4, r5: every line is fed
    // The last lines take a while: nothing is left to feed, and nothing is read for it.
    for (let i = 0; i < 5; i++) {
      await driver.tick();
      jest.advanceTimersByTime(100);
    }
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 6 });
    expect(files.reads).toBe(2);
  });

  it("a batch's window follows its deployment's live sequences: more workers, more lines at once", async () => {
    const id = await createBatch(Array.from({ length: 40 }, (_, i) => `r${i}`));
    // 3 live workers of PARALLEL sequences: twice those are fed at once, above BATCH_INFLIGHT (4).
    workers.live = 3;
    const driver = runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds BATCH_INFLIGHT: the batch's deployment is not known yet
    expect(queue.jobs.size).toBe(4);
    await driver.tick(); // known now: the window is its workers' sequences, twice over
    const parallel = config.deployments[0]!.parallel;
    expect(queue.jobs.size).toBe(Math.min(40, 2 * 3 * parallel));
    // Workers gone: the window falls back to BATCH_INFLIGHT, and nothing more is fed.
    workers.live = 0;
    await driver.tick();
    expect(queue.jobs.size).toBe(Math.min(40, 2 * 3 * parallel));
    const record = await runToEnd(driver, id, 200);
    expect(record).toMatchObject({ status: 'completed', completed: 40 });
  });

  it('a replica that dies after writing a part and before committing it: the next writes the same part, once', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `r${i}`);
    const id = await createBatch(ids);
    const first = runner();
    await first.tick();
    await first.tick();
    await runQueuedLines();
    lines.dieBeforeCommit = true;
    await first.tick(); // writes part 0 of the output, then dies before its commit
    const outputId = records.records.get(id)!.output_file_id!;
    expect(files.lines(outputId)).toHaveLength(4);
    expect(lines.done.size).toBe(0);
    // The lease lapses; another replica takes the batch over and writes the same results again.
    jest.advanceTimersByTime(1500);
    const record = await runToEnd(runner(), id);
    expect(record).toMatchObject({ status: 'completed', completed: 6, failed: 0 });
    expect(writtenIds(record).sort()).toEqual([...ids].sort());
  });

  it('a result counts as done only once its part is written: a failed write leaves it to be written later', async () => {
    const id = await createBatch(['a', 'b']);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    await runQueuedLines();
    files.failWrites = true;
    await driver.tick();
    expect(lines.done.size).toBe(0);
    expect(lines.results).toHaveLength(2);
    files.failWrites = false;
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 2 });
    expect(writtenIds(record).sort()).toEqual(['a', 'b']);
  });

  it('a replica that lost the batch writes and commits nothing', async () => {
    const id = await createBatch(['a', 'b']);
    const stale = compose();
    await stale.runner.tick();
    await stale.runner.tick();
    jest.advanceTimersByTime(1500);
    const current = runner();
    await current.tick(); // takes the lease over
    await runQueuedLines();
    const outputId = records.records.get(id)!.output_file_id!;
    // The old driver's lease lapsed: its collection is refused before it writes a part.
    await stale.writer.collect(records.records.get(id)!, { holder: stale.runner.instance });
    expect(files.lines(outputId)).toEqual([]);
    const record = await runToEnd(current, id);
    expect(writtenIds(record).sort()).toEqual(['a', 'b']);
  });

  it('a replica that gets a batch back after another drove it reads on from where that one left off', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    const id = await createBatch(ids);
    const first = runner();
    await first.tick();
    await first.tick(); // feeds r0..r3
    await runQueuedLines();
    jest.advanceTimersByTime(1500);
    const second = runner();
    await second.tick(); // takes the batch over: writes r0..r3, feeds r4..r7
    await runQueuedLines();
    jest.advanceTimersByTime(1500);
    const queued: string[] = [];
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = async (job) => {
      queued.push(job.batch!.customId);
      return enqueue(job);
    };
    await first.tick(); // has it back: nothing it saw before the other drove it counts any more
    expect(queued).toEqual(['r8', 'r9', 'r10', 'r11']);
    const record = await runToEnd(first, id);
    expect(record).toMatchObject({ status: 'completed', completed: 12 });
    expect(writtenIds(record).sort()).toEqual([...ids].sort());
  });

  it('writes a line retried after its worker died once, however often it reports', async () => {
    const id = await createBatch(['a']);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    const [jobId] = queue.jobs.keys();
    await runQueuedLines();
    await lines.pushResult(id, { ...lines.results[0]!, requestId: jobId! });
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 1 });
    expect(writtenIds(record)).toEqual(['a']);
  });

  it('queues again a line whose job vanished from the queue (a failover), and still writes it once', async () => {
    const ids = ['a', 'b', 'c'];
    const id = await createBatch(ids);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    const lostJob = [...queue.jobs.keys()].find((j) => parseBatchLineJobId(j)?.line === 2)!;
    queue.lose(lostJob);
    await runQueuedLines();
    for (let i = 0; i < 4; i++) {
      await driver.tick();
      jest.advanceTimersByTime(5000);
    }
    expect(queue.jobs.has(lostJob)).toBe(true);
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 3 });
    expect(writtenIds(record).sort()).toEqual(ids);
  });

  it('never completes with a custom_id unaccounted for: a line lost for good is written as lost', async () => {
    const id = await createBatch(['a', 'b']);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    // Line 2's job is lost every time it is queued, with no record of it in flight either.
    const drop = () => {
      for (const jobId of [...queue.jobs.keys()]) {
        if (parseBatchLineJobId(jobId)?.line === 2) {
          queue.lose(jobId);
          lines.inflightLines.delete(2);
        }
      }
    };
    for (let i = 0; i < 40 && records.activeIds.has(id); i++) {
      drop();
      await driver.tick();
      drop();
      await runQueuedLines();
      jest.advanceTimersByTime(100);
    }
    const record = records.records.get(id)!;
    expect(record).toMatchObject({ status: 'completed', completed: 1, failed: 1 });
    expect(files.lines(record.error_file_id)).toEqual([
      expect.objectContaining({ custom_id: 'b', error: expect.objectContaining({ code: 'line_lost' }) }),
    ]);
  });

  it('fails a batch whose input file is gone, once and clearly, instead of retrying it forever', async () => {
    const id = await createBatch(['a']);
    await files.delete(records.records.get(id)!.input_file_id);
    const driver = runner();
    await driver.tick();
    const record = records.records.get(id)!;
    expect(record.status).toBe('failed');
    expect(record.errors).toEqual([expect.objectContaining({ code: 'input_file_unreadable', param: 'input_file_id' })]);
    expect(records.activeIds.has(id)).toBe(false);
  });

  it('stores the images of the lines in flight only, each under its line job, and none is left at the end', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const id = await createBatch(ids, true);
    const driver = runner();
    await driver.tick(); // validates: nothing is stored
    expect(images.jobs.size).toBe(0);
    await driver.tick(); // feeds the window
    expect([...images.jobs.values()].map((jobs) => [...jobs])).toEqual([...queue.jobs.keys()].map((jobId) => [jobId]));
    expect(lines.inflightLines.get(1)?.images).toEqual([imageRef('r0abc').sha256]);
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 10 });
    expect(images.peak).toBe(4);
    expect(images.jobs.size).toBe(0);
  });

  it('releases the images of the lines a cancel takes back before any worker ran them', async () => {
    const id = await createBatch(
      Array.from({ length: 8 }, (_, i) => `r${i}`),
      true,
    );
    const driver = runner();
    await driver.tick();
    await driver.tick();
    expect(images.jobs.size).toBe(4);
    await records.update(id, { cancel_requested: true, status: 'cancelling' });
    await driver.tick();
    expect(queue.jobs.size).toBe(0);
    expect(images.jobs.size).toBe(0);
  });

  it('a cancel writes every line that did not run as batch_cancelled, once', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const id = await createBatch(ids);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    await records.update(id, { cancel_requested: true, status: 'cancelling' });
    const record = await runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(writtenIds(record).sort()).toEqual([...ids].sort());
    expect(files.lines(record.error_file_id).every((l) => l.error?.code === 'batch_cancelled')).toBe(true);
  });

  it('fails a batch whose input stays unreadable for 60 s, counted from the last read that worked', async () => {
    const id = await createBatch(['a', 'b']);
    const driver = runner();
    files.failReads = true;
    await driver.tick();
    jest.advanceTimersByTime(59_000);
    await driver.tick();
    expect(records.records.get(id)).toMatchObject({ status: 'validating' });
    files.failReads = false;
    await driver.tick(); // it reads again: validated
    expect(records.records.get(id)).toMatchObject({ status: 'in_progress' });
    // Unreadable again as the lines are fed: the 60 s start over, from this failure.
    files.failReads = true;
    await driver.tick();
    jest.advanceTimersByTime(59_000);
    await driver.tick();
    expect(records.records.get(id)).toMatchObject({ status: 'in_progress' });
    expect(records.activeIds.has(id)).toBe(true);
    jest.advanceTimersByTime(1_000);
    await driver.tick();
    const record = records.records.get(id)!;
    expect(record).toMatchObject({ status: 'failed', failed_at: expect.any(Number) });
    expect(record.errors).toEqual([
      expect.objectContaining({
        code: 'input_file_unreadable',
        param: 'input_file_id',
        message: expect.stringContaining('the store is unreachable'),
      }),
    ]);
    expect(records.activeIds.has(id)).toBe(false);
    expect(queue.jobs.size).toBe(0);
  });

  it('an expired batch keeps the lines that ran and writes the rest as batch_expired, once', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const id = await createBatch(ids);
    const driver = runner();
    await driver.tick();
    await driver.tick();
    await runQueuedLines();
    await records.update(id, { expires_at: Math.floor(Date.now() / 1000) });
    const record = await runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'expired', expired_at: expect.any(Number), completed: 4, failed: 0 });
    expect(files.lines(record.output_file_id).map((l) => l.custom_id)).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(files.lines(record.error_file_id).map((l) => [l.custom_id, l.error?.code])).toEqual(
      ['r4', 'r5', 'r6', 'r7'].map((c) => [c, 'batch_expired']),
    );
  });

  it('validation fails a batch with more lines than BATCH_MAX_LINES, and queues none of them', async () => {
    config = loadConfig({ MODEL: 'tiny', BATCH_INFLIGHT: '4', BATCH_MAX_LINES: '2' });
    const id = await createBatch(['a', 'b', 'c']);
    await runner().tick();
    const record = records.records.get(id)!;
    expect(record).toMatchObject({ status: 'failed', total: 3, failed_at: expect.any(Number), output_file_id: null });
    expect(record.errors).toEqual([expect.objectContaining({ code: 'too_many_lines', line: null })]);
    expect(queue.jobs.size).toBe(0);
    expect(records.activeIds.has(id)).toBe(false);
  });

  it('validation fails a file with no requests in it', async () => {
    const id = await createBatch([], false, '\n  \n');
    await runner().tick();
    expect(records.records.get(id)).toMatchObject({ status: 'failed', total: 0 });
    expect(records.records.get(id)!.errors).toEqual([expect.objectContaining({ code: 'empty_file' })]);
    expect(records.activeIds.has(id)).toBe(false);
  });

  it('validation lists the first 100 invalid lines, in order, and counts the rest', async () => {
    const valid = input(['a']).trim();
    const id = await createBatch([], false, [valid, ...Array.from({ length: 104 }, () => valid)].join('\n'));
    await runner().tick();
    const errors = records.records.get(id)!.errors!;
    expect(errors).toHaveLength(101);
    expect(errors.slice(0, 100).map((e) => [e.code, e.line])).toEqual(
      Array.from({ length: 100 }, (_, i) => ['duplicate_custom_id', i + 2]),
    );
    expect(errors[100]).toMatchObject({ code: 'too_many_errors', message: '4 more invalid lines are not listed.' });
  });

  it('a batch cancelled while validating starts as cancelling and ends with every line batch_cancelled', async () => {
    const id = await createBatch(['a', 'b']);
    await records.update(id, { cancel_requested: true });
    const driver = runner();
    await driver.tick();
    expect(records.records.get(id)).toMatchObject({ status: 'cancelling', total: 2 });
    const record = await runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(queue.jobs.size).toBe(0);
    expect(files.lines(record.error_file_id).map((l) => [l.custom_id, l.error?.code])).toEqual([
      ['a', 'batch_cancelled'],
      ['b', 'batch_cancelled'],
    ]);
  });
});
