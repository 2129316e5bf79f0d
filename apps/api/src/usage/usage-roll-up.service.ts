import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { UsageLedger } from '../repositories/usage-ledger.port.js';

/**
 * How often each replica adds the usage counted since to its buckets. A read adds them itself, so this
 * only keeps new counts from piling up (and lapsing, after two days) where no one reads.
 */
const ROLL_UP_MS = 30_000;

/**
 * Adds the usage counted lately to its minute, hour and day buckets, on every API replica. No replica
 * leads: a pass is one script per day, adding each count once however many replicas run it.
 */
@Injectable()
export class UsageRollUp implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(UsageRollUp.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly ledger: UsageLedger) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.ledger
        .rollUp(Date.now())
        .catch((err: Error) => this.logger.warn(`Could not add usage to its buckets: ${err.message}`))
        .finally(() => (this.running = null));
    }, ROLL_UP_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
