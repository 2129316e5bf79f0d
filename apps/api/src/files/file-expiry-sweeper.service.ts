import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FileNotFoundError, FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { PeriodicPass } from '../platform/periodic-pass.js';
import { FileExpiries } from '../repositories/file-expiries.port.js';

/** Files removed per pass at most; the rest wait for the next pass (they answer 404 meanwhile). */
const PER_PASS = 100;

/**
 * Removes expired files from the file store, on every API replica. No replica leads: removing a file is
 * safe to repeat (one already gone counts as removed), and a file leaves the expiry set only once it is
 * removed, so two replicas removing the same file at once, or one dying half-way, loses nothing.
 */
@Injectable()
export class FileExpirySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FileExpirySweeper.name);
  private readonly pass = new PeriodicPass(
    () => this.sweep(),
    (err) => this.logger.warn(`Could not remove expired files: ${err.message}`),
  );

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly expiries: FileExpiries,
    private readonly store: FileStore,
  ) {}

  onApplicationBootstrap(): void {
    this.pass.start(this.config.batch.expirySweepMs);
  }

  onApplicationShutdown(): Promise<void> {
    return this.pass.stop();
  }

  /** One pass: every file expired by now (up to PER_PASS) removed, then forgotten. */
  async sweep(): Promise<number> {
    const due = await this.expiries.due(Math.floor(Date.now() / 1000), PER_PASS);
    for (const id of due) {
      await this.store.delete(id).catch((err: unknown) => {
        if (!(err instanceof FileNotFoundError)) throw err;
      });
      await this.expiries.forget(id);
    }
    if (due.length) this.logger.log(`Removed ${due.length} expired file(s)`);
    return due.length;
  }
}
