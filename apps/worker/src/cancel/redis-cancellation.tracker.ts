import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { CANCEL_TTL_MS, cancelChannel, cancelsKey } from '@conveyor/queue';
import { CommandConnection, createRedis, type RedisClient } from '@conveyor/redis';
import { CancellationTracker, STOP, type StopReason } from './cancellation-tracker.port.js';

/** Cancels heard for jobs not running here, kept at most: past it, a job's start asks Redis again for a while. */
const MAX_HEARD = 100_000;

/**
 * Stops generations whose client has gone: the API marks the request id cancelled and publishes it, and
 * the worker holding it aborts. A cancel that arrives before the job starts is found when it does, among
 * the cancels this worker knows: those it heard, and those marked before it subscribed, read once it had.
 * Only while it cannot know them all (subscribing, a connection lost, more heard than it keeps) does a
 * job's start ask Redis.
 */
@Injectable()
export class RedisCancellationTracker extends CancellationTracker implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RedisCancellationTracker.name);
  private readonly running = new Map<string, AbortController>();
  /** A connection of its own: a subscribed connection takes no other commands. */
  private readonly subscriber: RedisClient;
  private readonly redis: RedisClient;
  /** Request ids of the cancels known for jobs not running here, by when each mark lapses (soonest first). */
  private readonly heard = new Map<string, number>();
  /** Whether every live cancel is known here: subscribed, and the marks made before read since. */
  private knowsAll = false;
  /** A cancel forgotten while its mark lives (past MAX_HEARD) leaves that much unknown until then (ms). */
  private forgotUntil = 0;
  /** Counts the subscriber's connections, so a read of the marks that a lost connection overtook counts for nothing. */
  private connections = 0;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.subscriber = createRedis(config.redis, 'conveyor-worker-cancel-sub', 'subscriber', this.logger);
    this.redis = redis;
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (_channel: string, requestId: string) => {
      const controller = this.running.get(requestId);
      if (controller) {
        this.logger.debug(`Cancelling ${requestId}: the client went away`);
        controller.abort(STOP.cancelled);
      } else this.hear(requestId, Date.now() + CANCEL_TTL_MS);
    });
    // A connection lost is cancels missed: from its return, once subscribed again, the marks are read again.
    this.subscriber.on('close', () => {
      this.connections++;
      this.knowsAll = false;
    });
    // The connection's first `ready` is the start's own, which the catch-up below covers: reading the marks
    // a second time, racing the first, could say all is known after a close had said otherwise.
    let starting = true;
    this.subscriber.on('ready', () => {
      if (!starting || this.connections > 0) void this.catchUp();
    });
    await this.catchUp();
    starting = false;
  }

  /** Subscribes (again), then reads every live mark: from then on, every cancel is known here. */
  private async catchUp(): Promise<void> {
    const connection = this.connections;
    try {
      await this.subscriber.subscribe(cancelChannel(this.config.redis.prefix));
      const now = Date.now();
      const marks = await this.redis.zrangebyscore(cancelsKey(this.config.redis.prefix), now, '+inf', 'WITHSCORES');
      for (let i = 0; i < marks.length; i += 2) this.hear(marks[i]!, Number(marks[i + 1]));
      if (connection === this.connections) this.knowsAll = true;
    } catch (err) {
      // Still unknown: each job's start asks Redis until a later connection catches up.
      this.logger.warn(`Could not read the cancels marked before subscribing: ${(err as Error).message}`);
    }
  }

  /** Keeps a cancel for a job that may start here later, as long as its mark lives in Redis. */
  private hear(requestId: string, lapses: number): void {
    const now = Date.now();
    this.heard.delete(requestId);
    this.heard.set(requestId, lapses);
    for (const [id, until] of this.heard) {
      if (until > now && this.heard.size <= MAX_HEARD) break;
      this.heard.delete(id);
      // One forgotten while its mark lives: known cancels no longer answer for every cancel until it lapses.
      if (until > now) this.forgotUntil = Math.max(this.forgotUntil, until);
    }
  }

  private async wasCancelled(requestId: string): Promise<boolean> {
    const lapses = await this.redis.zscore(cancelsKey(this.config.redis.prefix), requestId);
    return lapses !== null && Number(lapses) > Date.now();
  }

  /**
   * Aborts a tracked request if its client cancelled before the job started. Checked alongside
   * the generation, not ahead of it, so a request that was not cancelled waits for no round trip; and
   * while this worker knows every live cancel, checked without it.
   */
  abortIfCancelled(requestId: string): void {
    // Kept, not taken: a job tried again starts again.
    if ((this.heard.get(requestId) ?? 0) > Date.now()) {
      this.running.get(requestId)?.abort(STOP.cancelled);
      return;
    }
    if (this.knowsAll && Date.now() >= this.forgotUntil) return;
    this.wasCancelled(requestId).then(
      (cancelled) => cancelled && this.running.get(requestId)?.abort(STOP.cancelled),
      (err: Error) => this.logger.warn(`Could not check ${requestId} for a cancel: ${err.message}`),
    );
  }

  /** An AbortSignal that fires on a cancel for this request or when `linked` fires; its reason says why. */
  track(requestId: string, linked?: AbortSignal): AbortSignal {
    const controller = new AbortController();
    linked?.addEventListener('abort', () => controller.abort(STOP.cancelled), { once: true });
    this.running.set(requestId, controller);
    return controller.signal;
  }

  /** Stops every running generation for `reason`: the worker is shutting down, or lost a job's lock. */
  stop(reason: StopReason, requestIds?: readonly string[]): void {
    for (const [id, controller] of this.running) if (!requestIds || requestIds.includes(id)) controller.abort(reason);
  }

  untrack(requestId: string): void {
    this.running.delete(requestId);
  }

  onApplicationShutdown(): void {
    this.subscriber.disconnect();
  }
}
