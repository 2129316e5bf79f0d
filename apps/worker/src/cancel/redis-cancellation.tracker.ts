import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { cancelChannel, cancelKey } from '@conveyor/queue';
import { CommandConnection, createRedis, type RedisClient } from '@conveyor/redis';
import { CancellationTracker, STOP, type StopReason } from './cancellation-tracker.port.js';

/**
 * Stops generations whose client has gone: the API publishes the request id,
 * and the worker holding it aborts. A cancel that arrives before the job
 * starts is found by `wasCancelled` when it does.
 */
@Injectable()
export class RedisCancellationTracker extends CancellationTracker implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RedisCancellationTracker.name);
  private readonly running = new Map<string, AbortController>();
  /** A connection of its own: a subscribed connection takes no other commands. */
  private readonly subscriber: RedisClient;
  private readonly redis: RedisClient;

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
      }
    });
    await this.subscriber.subscribe(cancelChannel(this.config.redis.prefix));
  }

  private async wasCancelled(requestId: string): Promise<boolean> {
    return (await this.redis.exists(cancelKey(this.config.redis.prefix, requestId))) === 1;
  }

  /**
   * Aborts a tracked request if its client cancelled before the job started. Checked alongside
   * the generation, not ahead of it, so a request that was not cancelled waits for no round trip.
   */
  abortIfCancelled(requestId: string): void {
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
