import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PeriodicPass } from '../platform/periodic-pass.js';
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
  private readonly pass = new PeriodicPass(
    () => this.ledger.rollUp(Date.now()),
    (err) => this.logger.warn(`Could not add usage to its buckets: ${err.message}`),
  );

  constructor(private readonly ledger: UsageLedger) {}

  onApplicationBootstrap(): void {
    this.pass.start(ROLL_UP_MS);
  }

  onApplicationShutdown(): Promise<void> {
    return this.pass.stop();
  }
}
