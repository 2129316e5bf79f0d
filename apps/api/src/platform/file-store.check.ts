import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { StoreIdentities } from '../repositories/store-identities.port.js';

/** How long a replica's hold on the store record lasts unless renewed: the record's lapse after a crash. */
export const STORE_HOLD_MS = 15_000;
/** How often a replica renews its hold (as it verifies, each batch tick, at most this often). */
const RENEW_MS = 5_000;

/** Live replicas on this Redis prefix use another file store than this one. */
export class FileStoreMismatch extends Error {
  constructor(prefix: string) {
    super(
      `Another file store is in use by API replicas running now on the Redis prefix "${prefix}": replicas ` +
        'that share a Redis prefix must share one file store (FILE_STORE=s3://..., or one DATA_DIR on a ' +
        'shared volume), or batches would be driven by a replica that cannot read their files. Point this ' +
        'replica at the same file store, give this stack its own REDIS_PREFIX, or stop the replicas that ' +
        `use the other store: their record goes when the last of them stops (${STORE_HOLD_MS / 1000} s after ` +
        'it if it crashed).',
    );
    this.name = 'FileStoreMismatch';
  }
}

/**
 * Two API replicas with different file stores on one Redis prefix lose data: files uploaded through one
 * are missing on the other, and a batch driven by the wrong one can never run. Every replica holds the
 * prefix's record of its store's identity while it runs, renewing the hold; one with another store is
 * refused while a replica of the recorded one is alive, and welcome once none is (a stack restarted
 * after its data folder was deleted, a second clone on the same Redis).
 */
@Injectable()
export class FileStoreCheck implements OnApplicationShutdown {
  /** Names this replica among the record's holders. */
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  private heldAt = 0;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly store: FileStore,
    private readonly identities: StoreIdentities,
  ) {}

  /** Resolves while this replica's store is the one recorded (renewing its hold); throws FileStoreMismatch when not. */
  async verify(): Promise<void> {
    if (Date.now() - this.heldAt < RENEW_MS) return;
    const mine = await this.store.identity();
    if ((await this.identities.hold(mine, this.holder, STORE_HOLD_MS)) !== mine) {
      this.heldAt = 0;
      throw new FileStoreMismatch(this.config.redis.prefix);
    }
    this.heldAt = Date.now();
  }

  async onApplicationShutdown(): Promise<void> {
    // The record goes with its last holder: a stack started next with another store need not wait.
    if (this.heldAt) await this.identities.release(this.holder).catch(() => undefined);
  }
}
