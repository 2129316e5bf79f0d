import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { parseReplyEntry, replayReply, replyStreamKey, type SentReply } from '@conveyor/queue';
import { createRedis } from '@conveyor/redis';
import type { Redis } from 'ioredis';
import { RedisReplyPublisher } from './redis-reply-publisher.js';
import { ReplyPublisherFactory } from './reply-publisher.port.js';
import type { ReplySink } from './reply-sink.js';

/** Reply streams in Redis: owns the worker's publishing connection; one publisher per job attempt. */
@Injectable()
export class RedisReplyPublisherFactory extends ReplyPublisherFactory implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisReplyPublisherFactory.name);
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    // Auto-pipelining sends the events of all sequences produced in one tick as one write.
    this.redis = createRedis(config.redis, 'conveyor-worker-publish', 'background', this.logger, {
      enableAutoPipelining: true,
    });
  }

  /** What the request's client has been sent so far, by the same rule the API relays with. */
  async replay(requestId: string): Promise<SentReply> {
    const entries = await this.redis.xrange(replyStreamKey(this.config.redis.prefix, requestId), '-', '+');
    return replayReply(entries.flatMap(([, fields]) => parseReplyEntry(fields)));
  }

  open(requestId: string, attempt: number): ReplySink {
    return new RedisReplyPublisher(
      this.redis,
      replyStreamKey(this.config.redis.prefix, requestId),
      attempt,
      this.config.redis.replyTtlMs,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
