import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { CANCEL_TTL_MS, cancelChannel, cancelKey } from '@conveyor/queue';
import { CommandConnection, createRedis, type RedisClient } from '@conveyor/redis';
import { CancellationTracker, STOP, type StopReason } from './cancellation-tracker.port.js';

/** Cancels heard for jobs not running here, kept at most: past it, a job's start asks Redis again for a while. */
const MAX_HEARD = 100_000;
/** Time for the subscriber to subscribe again after it connected, and for clocks' rates to differ. */
const SUBSCRIBE_MARGIN_MS = 60_000;

/**
 * Stops generations whose client has gone: the API publishes the request id,
 * and the worker holding it aborts. A cancel that arrives before the job
 * starts is found when it does: among the cancels this worker heard, or, unless
 * it has heard every cancel whose mark is still in Redis, by `wasCancelled`.
 */
@Injectable()
export class RedisCancellationTracker extends CancellationTracker implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RedisCancellationTracker.name);
  private readonly running = new Map<string, AbortController>();
  /** A connection of its own: a subscribed connection takes no other commands. */
  private readonly subscriber: RedisClient;
  private readonly redis: RedisClient;
  /** Request ids of the cancels heard for jobs not running here, by when (oldest first). */
  private readonly heard = new Map<string, number>();
  /** Since when every cancel published has been heard (ms, this process's clock); null while unsubscribed. */
  private listeningSince: number | null = null;

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
      } else this.hear(requestId);
    });
    // A connection lost is cancels missed: from its return, each job asks Redis until the marks of
    // every cancel missed have lapsed. (It subscribes again itself once back, within the margin.)
    this.subscriber.on('close', () => (this.listeningSince = null));
    this.subscriber.on('ready', () => (this.listeningSince ??= Date.now()));
    await this.subscriber.subscribe(cancelChannel(this.config.redis.prefix));
    this.listeningSince ??= Date.now();
  }

  /** Keeps a cancel for a job that may start here later, as long as its mark lives in Redis. */
  private hear(requestId: string): void {
    const now = Date.now();
    this.heard.delete(requestId);
    this.heard.set(requestId, now);
    for (const [id, at] of this.heard) {
      if (at > now - CANCEL_TTL_MS && this.heard.size <= MAX_HEARD) break;
      this.heard.delete(id);
      // One forgotten while its mark lives: heard cancels no longer answer for every cancel.
      if (at > now - CANCEL_TTL_MS) this.listeningSince = now;
    }
  }

  /** Whether every cancel whose mark may still be in Redis was heard here. */
  private heardAll(): boolean {
    return this.listeningSince !== null && this.listeningSince < Date.now() - CANCEL_TTL_MS - SUBSCRIBE_MARGIN_MS;
  }

  private async wasCancelled(requestId: string): Promise<boolean> {
    return (await this.redis.exists(cancelKey(this.config.redis.prefix, requestId))) === 1;
  }

  /**
   * Aborts a tracked request if its client cancelled before the job started. Checked alongside
   * the generation, not ahead of it, so a request that was not cancelled waits for no round trip; and
   * once this worker has heard every cancel still marked in Redis, checked without it.
   */
  abortIfCancelled(requestId: string): void {
    // Kept, not taken: a job tried again starts again.
    if (this.heard.has(requestId)) {
      this.running.get(requestId)?.abort(STOP.cancelled);
      return;
    }
    if (this.heardAll()) return;
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
