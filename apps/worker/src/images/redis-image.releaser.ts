import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { imageJobsKey, imageKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { ImageReleaser } from './image-releaser.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    releaseImage(image: string, jobs: string, jobId: string): Result<number, Context>;
  }
}

/** Releases a finished job's images in Redis with the script the API uses too. */
@Injectable()
export class RedisImageReleaser extends ImageReleaser {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    const prefix = this.config.redis.prefix;
    await Promise.all(
      sha256s.map((sha) => this.redis.releaseImage(imageKey(prefix, sha), imageJobsKey(prefix, sha), jobId)),
    );
  }
}
