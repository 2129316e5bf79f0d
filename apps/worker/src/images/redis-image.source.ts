import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ImageSource } from '@conveyor/engine';
import { imageKey, type ImageRef } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

/**
 * Reads a job's images where the API stored them: each image's bytes once, under its hash, for as long
 * as a job refers to it.
 */
@Injectable()
export class RedisImageSource extends ImageSource {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async read(ref: ImageRef): Promise<Buffer> {
    const bytes = await this.redis.getBuffer(imageKey(this.config.redis.prefix, ref.sha256));
    // Gone: its last job finished (or Redis lost it). Another attempt would find it gone too.
    if (!bytes) {
      throw new UnrecoverableError(
        `Image ${ref.sha256} of this request is no longer stored in RedisClient; send the request again.`,
      );
    }
    if (createHash('sha256').update(bytes).digest('hex') !== ref.sha256)
      throw new UnrecoverableError(`The bytes stored for image ${ref.sha256} do not have that hash.`);
    return bytes;
  }
}
