import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { replyStreamKey } from '@conveyor/queue';
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

  open(requestId: string, attempt: number): ReplyPublisher {
    return new ReplyPublisher(this.redis, replyStreamKey(this.config.redis.prefix, requestId), attempt);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
