import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchResultsKey, type BatchLineResult } from '@conveyor/queue';
import { Redis } from 'ioredis';

/** Hands finished batch lines to the batch runner through the batch's results list. */
@Injectable()
export class BatchResultSink implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    this.redis = new Redis(config.redis.url, { connectionName: 'conveyor-worker-batch', maxRetriesPerRequest: 5 });
  }

  async push(batchId: string, result: BatchLineResult): Promise<void> {
    await this.redis.rpush(batchResultsKey(this.config.redis.prefix, batchId), JSON.stringify(result));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
