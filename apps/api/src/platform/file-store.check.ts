import { Inject, Injectable } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { StoreIdentities } from '../repositories/store-identities.port.js';

/** Redis records another file store for this prefix than the one this replica has. */
export class FileStoreMismatch extends Error {
  constructor(prefix: string) {
    super(
      `Another file store is recorded for the Redis prefix "${prefix}": the API replicas that share a Redis ` +
        'prefix must share one file store (FILE_STORE=s3://..., or one DATA_DIR on a shared volume), or ' +
        'batches would be driven by a replica that cannot read their files. Give this stack its own ' +
        'REDIS_PREFIX, or point it at the same file store.',
    );
    this.name = 'FileStoreMismatch';
  }
}

/**
 * Two API replicas with different file stores on one Redis prefix lose data: files uploaded through one
 * are missing on the other, and a batch driven by the wrong one can never run. The first replica records
 * its store's identity; any other must have the same one.
 */
@Injectable()
export class FileStoreCheck {
  private verified = false;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly store: FileStore,
    private readonly identities: StoreIdentities,
  ) {}

  /** Resolves once this replica's store is the one recorded; throws FileStoreMismatch when it is not. */
  async verify(): Promise<void> {
    if (this.verified) return;
    const mine = await this.store.identity();
    if ((await this.identities.claim(mine)) !== mine) throw new FileStoreMismatch(this.config.redis.prefix);
    this.verified = true;
  }
}
