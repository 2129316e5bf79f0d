import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchResultsKey, type BatchLineResult } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { BatchResultSink } from './batch-result-sink.port.js';

/** Hands finished batch lines to the batch runner through the batch's results list in Redis. */
@Injectable()
export class RedisBatchResultSink extends BatchResultSink {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async push(batchId: string, result: BatchLineResult): Promise<void> {
    const stamped: BatchLineResult = { ...result, finishedAt: result.finishedAt ?? Date.now() };
    await this.redis.rpush(batchResultsKey(this.config.redis.prefix, batchId), JSON.stringify(stamped));
  }
}
