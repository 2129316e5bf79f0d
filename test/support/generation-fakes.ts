/**
 * In-memory stand-ins for the ports the API's GenerationService drives (the job queue and its admission,
 * the reply relay, the image store, the live workers), each keeping what a test asserts on or steers:
 * jobs queued, cancelled and withdrawn, a Redis that loses a job, a worker writing a reply's events.
 */
import type { DecodedImage } from '@conveyor/protocol';
import type { QueuedJobData, ReplyEvent, UsageBucketWidth } from '@conveyor/queue';
import { JobQueue, type JobCounts } from '../../apps/api/src/contracts/job-queue.port.js';
import { ReplyRelay } from '../../apps/api/src/contracts/reply-relay.port.js';
import { ReplySubscription } from '../../apps/api/src/contracts/reply-subscription.js';
import { ImageStore } from '../../apps/api/src/repositories/image-store.port.js';
import { LiveWorkers } from '../../apps/api/src/repositories/live-workers.port.js';
import { QueueAdmission, type Admission, type Asker } from '../../apps/api/src/repositories/queue-admission.port.js';
import { UsageLedger, type UsageEntry, type UsageGroup } from '../../apps/api/src/repositories/usage-ledger.port.js';

/** The job queue in memory: jobs wait until a worker takes them, and stay findable after. */
export class InMemoryJobQueue extends JobQueue {
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
    return { waiting: await this.waiting(deployment), batch: 0, active: 0 };
  }
  async countsByState(deployment: string): Promise<Record<string, number>> {
    const c = await this.counts(deployment);
    return { waiting: c.waiting, prioritized: c.batch, active: c.active };
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

/** Admits while the in-memory queue has fewer than `limit` waiting jobs of the deployment, as the Redis script does. */
export class FakeAdmission extends QueueAdmission {
  /** The asker of each reservation, as the service named it (none with fair shares off). */
  readonly askers: (Asker | undefined)[] = [];
  /** Set: every reservation is refused as the places being held for other keys, this key holding `held`. */
  heldForOthers: { held: number; share: number } | null = null;

  constructor(private readonly queue: InMemoryJobQueue) {
    super();
  }

  async reserve(deployment: string, _requestId: string, limit: number, asker?: Asker): Promise<Admission> {
    this.askers.push(asker);
    const queued = await this.queue.waiting(deployment);
    if (this.heldForOthers) return { admitted: false, queued, ...this.heldForOthers };
    return queued < limit ? { admitted: true } : { admitted: false, queued };
  }

  async queued(): Promise<void> {}

  async release(): Promise<void> {}
}

/** The relay without Redis: a test writes a reply's events as a worker would. */
export class FakeReplyRelay extends ReplyRelay {
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
export class InMemoryImageStore extends ImageStore {
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

/** A fixed number of live workers per deployment (none for one not named). */
export class FakeLiveWorkers extends LiveWorkers {
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

/** Usage counted in memory, each request once, as the ledger's script counts it. */
export class InMemoryUsage extends UsageLedger {
  readonly entries: UsageEntry[] = [];
  async count(entry: UsageEntry): Promise<boolean> {
    if (this.entries.some((e) => e.requestId === entry.requestId)) return false;
    this.entries.push(entry);
    return true;
  }
  async rollUp(): Promise<void> {}
  async read(_width: UsageBucketWidth, starts: readonly number[]): Promise<UsageGroup[][]> {
    return starts.map(() => []);
  }
}
