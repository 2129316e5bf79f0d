import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { imageJobsKey, imageKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { DecodedImage } from '@conveyor/protocol';
import type { Result } from 'ioredis';
import { ImageStore } from './image-store.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    referImage(image: string, jobs: string, jobId: string, ttlMs: number): Result<number, Context>;
    holdImage(image: string, jobs: string, jobId: string, ttlMs: number, bytes: Buffer): Result<number, Context>;
    releaseImage(image: string, jobs: string, jobId: string): Result<number, Context>;
  }
}

/** A day: the longest a batch's line may reasonably wait in the queue behind interactive requests. */
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Images in Redis by their hash, each beside the set of jobs that refer to it (`imageKey`,
 * `imageJobsKey`); every step is one script, so a job recorded and the last job released cannot
 * interleave. An image already stored is referred to without sending its bytes again.
 *
 * Jobs release their images when they end (the worker, or the API for a job it withdrew), so the expiry
 * only clears what a process that died in between left behind: the bytes of a request whose API died
 * before queueing it, or of a job that failed with no worker left to say so. It must outlast every job
 * that may still run: an interactive request ends by REQUEST_TIMEOUT_MS (its job is then cancelled), and
 * a batch line waits behind interactive requests for as long as they keep every worker busy, so it is
 * the longer of the request deadline and a day. A line that waited longer than that fails for its
 * missing image, rather than Redis keeping every leaked image for as long as the longest batch window.
 */
@Injectable()
export class ImageRepository extends ImageStore {
  private readonly redis: RedisClient;
  private readonly ttlMs: number;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
    this.ttlMs = Math.max(config.api.requestTimeoutMs, DAY_MS);
  }

  async hold(jobId: string, images: readonly DecodedImage[]): Promise<void> {
    const prefix = this.config.redis.prefix;
    await Promise.all(
      images.map(async ({ ref, data }) => {
        const keys = [imageKey(prefix, ref.sha256), imageJobsKey(prefix, ref.sha256)] as const;
        if (await this.redis.referImage(...keys, jobId, this.ttlMs)) return;
        await this.redis.holdImage(...keys, jobId, this.ttlMs, data);
      }),
    );
  }

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    const prefix = this.config.redis.prefix;
    await Promise.all(
      sha256s.map((sha) => this.redis.releaseImage(imageKey(prefix, sha), imageJobsKey(prefix, sha), jobId)),
    );
  }
}
