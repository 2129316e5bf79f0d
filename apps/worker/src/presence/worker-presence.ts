import { Logger } from '@nestjs/common';
import type { RedisClient } from '@conveyor/redis';
import { liveWorkersKey } from '@conveyor/queue';

/**
 * Announces this worker as live for its deployments, renewing the
 * announcement every `heartbeatMs`; it lapses after three missed beats, so a
 * killed worker drops out without saying goodbye.
 */
export class WorkerPresence {
  private readonly logger = new Logger(WorkerPresence.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly workerId: string,
    private readonly deployments: readonly string[],
    private readonly heartbeatMs: number,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(
      () => void this.beat().catch((err: Error) => this.logger.warn(`Heartbeat failed: ${err.message}`)),
      this.heartbeatMs,
    );
  }

  /** One pipeline per deployment: on a cluster, deployments' keys sit in different slots. */
  private async beat(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      this.deployments.map((d) => {
        const key = liveWorkersKey(this.prefix, d);
        return this.redis
          .pipeline()
          .zadd(key, now + this.heartbeatMs * 3, this.workerId)
          .zremrangebyscore(key, '-inf', now)
          .exec();
      }),
    );
  }

  /** Withdraws the announcement at once, so readiness and routing stop counting this worker. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(
      this.deployments.map((d) => this.redis.zrem(liveWorkersKey(this.prefix, d), this.workerId)),
    ).catch(() => undefined);
  }
}
