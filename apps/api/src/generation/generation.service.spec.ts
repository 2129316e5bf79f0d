import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Histogram } from 'prom-client';
import { loadConfig, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { DecodedImage } from '@conveyor/protocol';
import {
  isRequestId,
  type GenerationJobData,
  type ImageRef,
  type QueuedJobData,
  type ReplyEvent,
} from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { WorkerRoutes, type RoutePick } from '../repositories/worker-routes.port.js';
import { JobRouting } from './job-routing.service.js';
import { GenerationService, type SubmitOptions } from './generation.service.js';
import { QueueAdmission, type Admission } from '../repositories/queue-admission.port.js';
import { JobQueue, type JobCounts } from './job-queue.port.js';
import { ClientGone } from './reply-reader.js';
import { ReplyRelay } from './reply-relay.port.js';
import type { OutputEvent, ReplyRun } from './reply-run.js';
import { ReplySubscription } from './reply-subscription.js';
import { rejection } from '../../../../test/support/rejection.js';

/** The job queue in memory: jobs wait until a worker takes them, and stay findable after. */
/** Admits while the in-memory queue has fewer than `limit` waiting jobs of the deployment, as the Redis script does. */
/** No worker holds any prompt: every job goes to its deployment's queue. */
class NoRoutes extends WorkerRoutes {
  async pick(): Promise<RoutePick> {
    return { outcome: 'miss' };
  }
}

class FakeAdmission extends QueueAdmission {
  constructor(private readonly queue: InMemoryJobQueue) {
    super();
  }

  async reserve(deployment: string, _requestId: string, limit: number): Promise<Admission> {
    const queued = await this.queue.waiting(deployment);
    return queued < limit ? { admitted: true } : { admitted: false, queued };
  }

  async release(): Promise<void> {}
}

class InMemoryJobQueue extends JobQueue {
  readonly enqueued: QueuedJobData[] = [];
  readonly cancelled: { deployment: string; requestId: string }[] = [];
  readonly withdrawn: string[] = [];
  /** Set to make the next enqueue fail, as when Redis is unreachable. */
  enqueueFailure: Error | null = null;
  /** Set to make reading the backlog fail. */
  backlogFailure: Error | null = null;
  private readonly waitingJobs = new Map<string, QueuedJobData>();
  private readonly jobs = new Map<string, QueuedJobData>();

  async enqueue(job: QueuedJobData): Promise<void> {
    if (this.enqueueFailure) throw this.enqueueFailure;
    this.enqueued.push(job);
    this.remember(job);
    this.waitingJobs.set(job.requestId, job);
  }

  /** A job the queue holds without this replica having enqueued it (another replica did). */
  remember(job: QueuedJobData): void {
    this.jobs.set(job.requestId, job);
  }

  /** A worker takes the job: it no longer waits, and can no longer be withdrawn. */
  take(requestId: string): void {
    this.waitingJobs.delete(requestId);
  }

  isWaiting(requestId: string): boolean {
    return this.waitingJobs.has(requestId);
  }

  async cancel(deployment: string, requestId: string): Promise<boolean> {
    this.cancelled.push({ deployment, requestId });
    return this.waitingJobs.delete(requestId);
  }

  async exists(_deployment: string, jobId: string): Promise<boolean> {
    return this.jobs.has(jobId);
  }

  async find(requestId: string): Promise<QueuedJobData | null> {
    return this.jobs.get(requestId) ?? null;
  }

  async counts(deployment: string): Promise<JobCounts> {
    return { waiting: await this.waiting(deployment), prioritized: 0, active: 0 };
  }

  reachable = true;

  async waiting(deployment: string): Promise<number> {
    if (this.backlogFailure) throw this.backlogFailure;
    return [...this.waitingJobs.values()].filter((job) => job.deployment === deployment).length;
  }

  async withdraw(_deployment: string, requestId: string): Promise<boolean> {
    if (!this.waitingJobs.delete(requestId)) return false;
    this.withdrawn.push(requestId);
    return true;
  }

  private readonly reconnectListeners: (() => void)[] = [];

  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /** The store answers again after an outage. */
  reconnect(): void {
    for (const listener of this.reconnectListeners) listener();
  }

  /** The store comes back without a job it had acknowledged (a failover to a replica that never had it). */
  lose(requestId: string): void {
    this.jobs.delete(requestId);
    this.waitingJobs.delete(requestId);
  }
}

/** The relay without Redis: a test writes a reply's events as a worker would. */
class FakeReplyRelay extends ReplyRelay {
  readonly replica = 'replica-1';
  /** Every request followed, new (`subscribe`) or resumed (`follow`, with the replica and time it named). */
  readonly subscribed: string[] = [];
  readonly followed: { requestId: string; replica: string; since: number }[] = [];
  private readonly subs = new Map<string, ReplySubscription>();

  subscribe(requestId: string): ReplySubscription {
    const sub = new ReplySubscription(requestId, (s) => {
      if (this.subs.get(s.requestId) === s) this.subs.delete(s.requestId);
    });
    this.subs.set(requestId, sub);
    this.subscribed.push(requestId);
    return sub;
  }

  follow(requestId: string, replica: string, since: number): ReplySubscription {
    this.followed.push({ requestId, replica, since });
    return this.subscribe(requestId);
  }

  fail(requestId: string, error: unknown): void {
    this.subs.get(requestId)?.fail(error);
  }

  failAll(error: unknown): void {
    for (const sub of this.subs.values()) sub.fail(error);
  }

  get open(): number {
    return this.subs.size;
  }

  /** Appends events to a reply, as a worker does; the relay hands them to whoever follows it. */
  write(requestId: string, events: ReplyEvent[]): void {
    this.subs.get(requestId)?.push(events);
  }
}

/** Images by hash with the jobs that refer to them, as the Redis scripts keep them. */
class InMemoryImageStore extends ImageStore {
  readonly jobs = new Map<string, Set<string>>();
  /** Every step, in order: which job held or released which images. */
  readonly steps: string[] = [];

  async hold(jobId: string, images: readonly DecodedImage[]): Promise<void> {
    this.steps.push(`hold ${jobId} ${images.map((i) => i.ref.sha256).join(',')}`);
    for (const { ref } of images) this.jobs.set(ref.sha256, (this.jobs.get(ref.sha256) ?? new Set()).add(jobId));
  }

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    this.steps.push(`release ${jobId} ${sha256s.join(',')}`);
    for (const sha of sha256s) {
      this.jobs.get(sha)?.delete(jobId);
      if (!this.jobs.get(sha)?.size) this.jobs.delete(sha);
    }
  }
}

class FakeLiveWorkers extends LiveWorkers {
  constructor(private readonly live: Readonly<Record<string, number>>) {
    super();
  }

  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, this.live[d] ?? 0]));
  }

  async count(deployment: string): Promise<number> {
    return this.live[deployment] ?? 0;
  }
}

const REQUEST_TIMEOUT_MS = 60_000;
const QUEUE_TIMEOUT_MS = 5_000;
const MAX_QUEUE_DEPTH = 3;

function platformConfig(): PlatformConfig {
  const base = loadConfig({});
  const deployment = (id: string): DeploymentConfig => ({ ...base.deployments[0], id });
  return {
    ...base,
    api: {
      ...base.api,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      queueTimeoutMs: QUEUE_TIMEOUT_MS,
      maxQueueDepth: MAX_QUEUE_DEPTH,
    },
    deployments: [deployment('alpha'), deployment('beta')],
  };
}

const OPTIONS: SubmitOptions = { idPrefix: 'chatcmpl-', stream: true, prompt: [], caller: 'anonymous' };

const start: ReplyEvent = { type: 'start', attempt: 1, seq: 0, promptTokens: 4, resumed: false };
const delta = (text: string, seq: number): ReplyEvent => ({ type: 'delta', attempt: 1, seq, text });
const end = (seq: number): ReplyEvent => ({
  type: 'end',
  attempt: 1,
  seq,
  finishReason: 'stop',
  usage: { promptTokens: 4, completionTokens: 2 },
});

/** What a call threw; fails the test when it returns. */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

async function drain(events: AsyncGenerator<OutputEvent>): Promise<OutputEvent[]> {
  const seen: OutputEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** How many observations a histogram holds for a deployment. */
async function observations(histogram: Histogram<'deployment'>, deployment: string): Promise<number> {
  const { values } = await histogram.get();
  const count = values.find((v) => v.metricName?.endsWith('_count') && v.labels.deployment === deployment);
  return count?.value ?? 0;
}

beforeAll(() => {
  // The service logs every request; the tests read its effects, not its log lines.
  Logger.overrideLogger(false);
});

describe('GenerationService', () => {
  let config: PlatformConfig;
  let registry: DeploymentRegistry;
  let queue: InMemoryJobQueue;
  let relay: FakeReplyRelay;
  let metrics: PlatformMetrics;
  let service: GenerationService;
  /** Every job the builder was asked for, with the request id and time it was given. */
  let built: { requestId: string; now: number; job: GenerationJobData }[];
  let client: AbortController;
  let images: InMemoryImageStore;

  beforeEach(() => {
    // The deadlines are timers: fake ones, so no test waits for one.
    jest.useFakeTimers();
    config = platformConfig();
    registry = new DeploymentRegistry(config);
    queue = new InMemoryJobQueue();
    relay = new FakeReplyRelay();
    const workers = new FakeLiveWorkers({ alpha: 2, beta: 1 });
    metrics = new PlatformMetrics(registry, queue, workers, { active: async () => [], get: async () => null });
    const routing = new JobRouting(registry, new NoRoutes(), metrics);
    service = new GenerationService(
      config,
      registry,
      queue,
      relay,
      workers,
      metrics,
      new FakeAdmission(queue),
      routing,
      (images = new InMemoryImageStore()),
    );
    built = [];
    client = new AbortController();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  /** The job builder a feature service passes for a request to `deployment`. */
  const builderFor =
    (deployment: DeploymentConfig) =>
    (requestId: string, now: number): GenerationJobData => {
      const job: GenerationJobData = {
        requestId,
        deployment: deployment.id,
        messages: [{ role: 'user', content: 'Hi' }],
        sampling: { temperature: 0 },
        stop: [],
        enqueuedAt: now,
      };
      built.push({ requestId, now, job });
      return job;
    };

  /** What a feature service does with a request: find its deployment, then submit its job. */
  const request = async (model: string, only?: DeploymentConfig): Promise<ReplyRun> => {
    const deployment = service.deploymentFor(model, only);
    return service.submit(deployment, builderFor(deployment), client.signal, OPTIONS);
  };

  const keyOf = (requestId: string) => requestId;
  const requestIdOf = (run: ReplyRun) => run.who.id.slice(OPTIONS.idPrefix.length);

  /** Asserts that nothing was queued, built or followed for a refused request. */
  const expectNothingQueued = () => {
    expect(built).toEqual([]);
    expect(queue.enqueued).toEqual([]);
    expect(relay.subscribed).toEqual([]);
  };

  describe('deploymentFor', () => {
    it('is the deployment the model names', () => {
      expect(service.deploymentFor('beta').id).toBe('beta');
      expect(service.deploymentFor('beta', registry.require('beta')).id).toBe('beta');
    });

    it('refuses a model that is not deployed, and one other than the deployment the route serves, with 404', () => {
      for (const refused of [
        () => service.deploymentFor('gamma'),
        () => service.deploymentFor('alpha', registry.require('beta')),
      ]) {
        const error = thrown(refused);
        expect(error).toBeInstanceOf(OpenAiHttpError);
        expect(error).toMatchObject({ status: 404, code: ErrorCode.modelNotFound, param: 'model' });
      }
    });
  });

  describe('refused requests', () => {
    it('queues nothing for a model that is not deployed (404)', async () => {
      expect(await rejection(request('gamma'))).toMatchObject({ status: 404, code: ErrorCode.modelNotFound });
      expectNothingQueued();
    });

    it("queues nothing for a model other than the route's own deployment (404)", async () => {
      expect(await rejection(request('alpha', registry.require('beta')))).toMatchObject({
        status: 404,
        code: ErrorCode.modelNotFound,
      });
      expectNothingQueued();
    });

    it('refuses with 429 and Retry-After once the queue is full, queueing nothing more', async () => {
      for (let i = 0; i < MAX_QUEUE_DEPTH; i++) await request('alpha');
      expect(queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      const error = (await rejection(request('alpha'))) as OpenAiHttpError;
      expect(error).toBeInstanceOf(OpenAiHttpError);
      expect(error.status).toBe(429);
      expect(error.type).toBe('rate_limit_error');
      expect(error.code).toBe(ErrorCode.queueFull);
      expect(error.headers).toEqual({ 'retry-after': '1' });
      expect(error.message).toContain(`(${MAX_QUEUE_DEPTH} requests waiting)`);
      expect(built).toHaveLength(MAX_QUEUE_DEPTH);
      expect(queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      expect(relay.subscribed).toHaveLength(MAX_QUEUE_DEPTH);
      // Another deployment's queue is not this one's.
      await expect(request('beta')).resolves.toBeDefined();
    });

    it('refuses with 503 at once while the queue is unreachable, queueing nothing', async () => {
      queue.reachable = false;
      expect(await rejection(request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expectNothingQueued();
    });

    it('refuses with 503 when the backlog cannot be read, queueing nothing', async () => {
      queue.backlogFailure = new Error('Connection is closed.');
      expect(await rejection(request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expectNothingQueued();
    });

    it('refuses with 503 when the job cannot be queued, and stops following its reply', async () => {
      queue.enqueueFailure = new Error('Connection is closed.');
      const error = (await rejection(request('alpha'))) as OpenAiHttpError;
      expect(error.status).toBe(503);
      expect(error.code).toBe(ErrorCode.serviceUnavailable);
      expect(error.message).toContain('Connection is closed.');
      expect(queue.enqueued).toEqual([]);
      expect(relay.subscribed).toHaveLength(1);
      expect(relay.open).toBe(0);
    });
  });

  describe('jobs Redis lost', () => {
    it('enqueues again, under the same id, a job Redis came back without before any worker ran it', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      const kept = await request('alpha');
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      expect(queue.enqueued.map((j) => j.requestId)).toEqual([requestId, requestIdOf(kept), requestId]);
      expect(queue.enqueued[2]).toBe(queue.enqueued[0]);
      expect(queue.isWaiting(requestId)).toBe(true);
      // Its reply is still followed: a worker running the job now answers the waiting client.
      relay.write(keyOf(requestId), [start, delta('Hi', 1), end(2)]);
      expect(await drain(run.events)).toEqual([start, delta('Hi', 1), end(2)]);
      expect(service.followed.size).toBe(1);
    });

    it('ends with a retryable 503 a reply whose job is gone after its reply began, and cancels it', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      queue.take(requestId);
      relay.write(keyOf(requestId), [start, delta('Hel', 1)]);
      expect((await run.events.next()).value).toEqual(start);
      expect((await run.events.next()).value).toEqual(delta('Hel', 1));
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      const error = (await rejection(run.events.next())) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable, headers: { 'retry-after': '1' } });
      expect(queue.enqueued).toHaveLength(1);
      expect(queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
      expect(service.followed.size).toBe(0);
    });

    it('does not put back a job withdrawn at the queue deadline', async () => {
      const run = await request('alpha');
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      queue.reconnect();
      await service.followed.recover();
      expect(queue.enqueued).toHaveLength(1);
      expect(service.followed.size).toBe(0);
    });

    it('stops following a reply once it ends', async () => {
      const run = await request('alpha');
      relay.write(keyOf(requestIdOf(run)), [start, end(1)]);
      await drain(run.events);
      expect(service.followed.size).toBe(0);
    });
  });

  describe('submit', () => {
    it('queues exactly the job the builder makes, under the request id the reply is named by', async () => {
      const run = await request('alpha');
      expect(built).toHaveLength(1);
      const [{ requestId, now, job }] = built;
      expect(isRequestId(requestId)).toBe(true);
      expect(queue.enqueued).toHaveLength(1);
      // The job is the builder's, owned by the caller (only the caller may resume its reply), and names
      // this replica, whose inbox its reply's events go to.
      expect(queue.enqueued[0]).toEqual({ ...job, owner: 'anonymous', replyTo: 'replica-1' });
      expect(run.who).toEqual({ id: `chatcmpl-${requestId}`, model: 'alpha', created: Math.floor(now / 1000) });
      expect(now).toBe(Date.now());
      expect(relay.subscribed).toEqual([keyOf(requestId)]);
    });

    it('gives each request its own id', async () => {
      const first = await request('alpha');
      const second = await request('alpha');
      expect(requestIdOf(first)).not.toBe(requestIdOf(second));
      expect(queue.enqueued.map((j) => j.requestId)).toEqual([requestIdOf(first), requestIdOf(second)]);
    });

    it("hands the reply's events to the caller in order and cancels nothing once it ends", async () => {
      const run = await request('alpha');
      const key = keyOf(requestIdOf(run));
      queue.take(requestIdOf(run));
      relay.write(key, [start, delta('Hel', 1)]);
      relay.write(key, [delta('lo', 2), end(3)]);
      expect(await drain(run.events)).toEqual([start, delta('Hel', 1), delta('lo', 2), end(3)]);
      expect(queue.cancelled).toEqual([]);
      expect(relay.open).toBe(0);
      // The queue wait and the first text are timed for requests this replica queued.
      expect(await observations(metrics.queueWait, 'alpha')).toBe(1);
      expect(await observations(metrics.timeToFirstToken, 'alpha')).toBe(1);
    });

    it("raises the worker's error as the HTTP error and does not cancel the job", async () => {
      const run = await request('alpha');
      relay.write(keyOf(requestIdOf(run)), [
        start,
        { type: 'error', attempt: 1, seq: 1, status: 400, code: ErrorCode.contextLengthExceeded, message: 'too long' },
      ]);
      expect(await run.events.next()).toEqual({ value: start, done: false });
      expect(await rejection(run.events.next())).toMatchObject({
        status: 400,
        code: ErrorCode.contextLengthExceeded,
        message: 'too long',
      });
      expect(queue.cancelled).toEqual([]);
    });

    it('cancels the job when the client leaves', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      queue.take(requestId);
      relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const pending = rejection(run.events.next());
      client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
      expect(relay.open).toBe(0);
    });

    it('withdraws a job no worker took by the queue deadline, with a 503 naming the live workers', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS - 1);
      expect(queue.withdrawn).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      const error = (await pending) as OpenAiHttpError;
      expect(error).toBeInstanceOf(OpenAiHttpError);
      expect(error.status).toBe(503);
      expect(error.code).toBe(ErrorCode.serviceUnavailable);
      expect(error.message).toContain('"alpha"');
      expect(error.message).toContain(`within ${QUEUE_TIMEOUT_MS} ms`);
      expect(error.message).toContain('(2 live workers)');
      expect(queue.withdrawn).toEqual([requestId]);
      expect(queue.isWaiting(requestId)).toBe(false);
    });

    it('names a single live worker in the singular', async () => {
      const run = await request('beta');
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(((await pending) as Error).message).toContain('(1 live worker)');
    });

    it('keeps a reply whose job a worker took before the queue deadline, even before its first event', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      const next = run.events.next();
      queue.take(requestId);
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(queue.withdrawn).toEqual([]);
      relay.write(keyOf(requestId), [start]);
      expect(await next).toEqual({ value: start, done: false });
    });

    it('does not try to withdraw a job whose reply has started', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const next = run.events.next();
      // The worker has not been marked as holding it: only the reply's start says so.
      expect(queue.isWaiting(requestId)).toBe(true);
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS * 2);
      expect(queue.withdrawn).toEqual([]);
      relay.write(keyOf(requestId), [end(1)]);
      expect(await next).toEqual({ value: end(1), done: false });
    });

    it('ends a reply at the request deadline with 504 and cancels its job', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 504, code: ErrorCode.timeout });
      expect(queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
    });
  });

  describe('images', () => {
    const ref: ImageRef = { sha256: 'a'.repeat(64), mime: 'image/png', bytes: 3, width: 1, height: 1 };
    const image: DecodedImage = { ref, data: Buffer.from([1, 2, 3]) };
    const withImage =
      (deployment: DeploymentConfig) =>
      (requestId: string, now: number): GenerationJobData => ({
        ...builderFor(deployment)(requestId, now),
        messages: [{ role: 'user', content: 'What is it?', parts: [{ type: 'image', image: ref }] }],
      });
    const imageRequest = (model = 'alpha') => {
      const deployment = service.deploymentFor(model);
      return service.submit(deployment, withImage(deployment), client.signal, { ...OPTIONS, images: [image] });
    };

    it('stores the images under the job before it is queued; the job carries their references only', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      expect(images.steps).toEqual([`hold ${requestId} ${ref.sha256}`]);
      expect(JSON.stringify(queue.enqueued[0])).not.toContain('"data"');
      expect((queue.enqueued[0] as GenerationJobData).messages[0]!.parts).toEqual([{ type: 'image', image: ref }]);
    });

    it('stores nothing for a request refused before queueing', async () => {
      await request('alpha');
      await request('alpha');
      await request('alpha');
      expect(await rejection(imageRequest())).toMatchObject({ status: 429 });
      expect(images.steps).toEqual([]);
    });

    it('releases the images of a job that could not be queued', async () => {
      queue.enqueueFailure = new Error('Connection is closed.');
      expect(await rejection(imageRequest())).toMatchObject({ status: 503 });
      expect(images.steps).toHaveLength(2);
      expect(images.steps[1]).toMatch(/^release /);
      expect(images.jobs.size).toBe(0);
    });

    it('releases the images of a job withdrawn at the queue deadline', async () => {
      const run = await imageRequest();
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      expect(images.steps.at(-1)).toBe(`release ${requestIdOf(run)} ${ref.sha256}`);
      expect(images.jobs.size).toBe(0);
    });

    it('releases the images of a job its client left while it waited, and leaves a running one to its worker', async () => {
      const waiting = await imageRequest();
      const pending = rejection(waiting.events.next());
      client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(images.steps.at(-1)).toBe(`release ${requestIdOf(waiting)} ${ref.sha256}`);

      client = new AbortController();
      const running = await imageRequest();
      const requestId = requestIdOf(running);
      queue.take(requestId);
      relay.write(keyOf(requestId), [start]);
      await running.events.next();
      const gone = rejection(running.events.next());
      client.abort();
      expect(await gone).toBeInstanceOf(ClientGone);
      expect(queue.cancelled.map((c) => c.requestId)).toContain(requestId);
      expect(images.jobs.get(ref.sha256)).toEqual(new Set([requestId]));
    });

    it('ends with a retryable 503, rather than queueing again, a job Redis lost with the images it refers to', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      expect(await rejection(run.events.next())).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expect(queue.enqueued).toHaveLength(1);
    });
  });

  describe('resume', () => {
    const waitingJob = (requestId: string): GenerationJobData => ({
      requestId,
      deployment: 'beta',
      messages: [{ role: 'user', content: 'Hi' }],
      sampling: { temperature: 0 },
      stop: [],
      enqueuedAt: 1_700_000_000_500,
      owner: 'anonymous',
      replyTo: 'replica-2',
    });
    const REQUEST_ID = '0b9e8c44-8f0a-4c1e-9a57-1b2c3d4e5f60';

    it('refuses an id that is not one of its replies with 400', async () => {
      for (const id of ['chatcmpl-not-a-request', `cmpl-${REQUEST_ID}`, REQUEST_ID, 'chatcmpl-']) {
        const error = (await rejection(service.resume(id, 'chatcmpl-', 'anonymous', client.signal))) as OpenAiHttpError;
        expect(error).toBeInstanceOf(OpenAiHttpError);
        expect(error).toMatchObject({
          status: 400,
          type: 'invalid_request_error',
          param: 'completion_id',
          code: ErrorCode.invalidCompletionId,
        });
      }
      expect(relay.subscribed).toEqual([]);
    });

    it('refuses an id the queue does not know with 404', async () => {
      const error = (await rejection(
        service.resume(`chatcmpl-${REQUEST_ID}`, 'chatcmpl-', 'anonymous', client.signal),
      )) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 404, type: 'not_found_error', code: ErrorCode.completionNotFound });
      expect(error.message).toContain(`chatcmpl-${REQUEST_ID}`);
      expect(relay.subscribed).toEqual([]);
    });

    it("answers another caller's reply exactly as an unknown one: 404", async () => {
      queue.remember(waitingJob(REQUEST_ID));
      const error = (await rejection(
        service.resume(`chatcmpl-${REQUEST_ID}`, 'chatcmpl-', 'team-b', client.signal),
      )) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 404, code: ErrorCode.completionNotFound });
      expect(relay.subscribed).toEqual([]);
    });

    it('follows a known reply under its original identity, and the queue deadline never ends it', async () => {
      // Queued through another replica and still waiting: just what a queue deadline would withdraw.
      await queue.enqueue(waitingJob(REQUEST_ID));
      const run = await service.resume(`chatcmpl-${REQUEST_ID}`, 'chatcmpl-', 'anonymous', client.signal);
      expect(run.who).toEqual({ id: `chatcmpl-${REQUEST_ID}`, model: 'beta', created: 1_700_000_000 });
      // Read from the replica its job named, since the job was queued.
      expect(relay.followed).toEqual([{ requestId: REQUEST_ID, replica: 'replica-2', since: 1_700_000_000_500 }]);
      const next = run.events.next();
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS * 10);
      expect(queue.withdrawn).toEqual([]);
      expect(queue.isWaiting(REQUEST_ID)).toBe(true);
      expect(queue.cancelled).toEqual([]);
      relay.write(keyOf(REQUEST_ID), [start, delta('Hi', 1), end(2)]);
      expect(await next).toEqual({ value: start, done: false });
      expect(await drain(run.events)).toEqual([delta('Hi', 1), end(2)]);
      expect(queue.cancelled).toEqual([]);
      // The replica that queued the request timed it; a resumed reply is not timed twice.
      expect(await observations(metrics.queueWait, 'beta')).toBe(0);
    });

    it('cancels the job when a resuming client leaves', async () => {
      queue.remember(waitingJob(REQUEST_ID));
      const run = await service.resume(`chatcmpl-${REQUEST_ID}`, 'chatcmpl-', 'anonymous', client.signal);
      const pending = rejection(run.events.next());
      client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(queue.cancelled).toEqual([{ deployment: 'beta', requestId: REQUEST_ID }]);
    });
  });
});
