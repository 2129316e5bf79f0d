import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { parseReplyEntry, replayReply, replyStreamKey } from '@conveyor/queue';
import { Redis } from 'ioredis';
import { ReplyPublisher } from './reply-publisher.js';

/** Owns the worker's publishing connection; one publisher per job attempt. */
@Injectable()
export class ReplyPublisherFactory implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    // Auto-pipelining sends the events of all sequences produced in one tick as one write.
    this.redis = new Redis(config.redis.url, { connectionName: 'conveyor-worker-publish', enableAutoPipelining: true, maxRetriesPerRequest: 5 });
  }

  /** What the request's client has been sent so far, by the same rule the API relays with. */
  async replay(requestId: string): Promise<{ text: string; ended: boolean }> {
    const entries = await this.redis.xrange(replyStreamKey(this.config.redis.prefix, requestId), '-', '+');
    return replayReply(entries.flatMap(([, fields]) => parseReplyEntry(fields)));
  }

  open(requestId: string, attempt: number): ReplyPublisher {
    return new ReplyPublisher(this.redis, replyStreamKey(this.config.redis.prefix, requestId), attempt, this.config.redis.replyTtlMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
