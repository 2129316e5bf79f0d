import type { LoggerService } from '@nestjs/common';
import type { TokenUsage } from '@conveyor/queue';
import type { GenAiOperation } from '../contracts/surface-route.js';
import type { RunnerEndpointUrl } from '../repositories/batch-record.js';
import type { UsageLedger } from '../repositories/usage-ledger.port.js';

/** A reply this replica reads, and what its usage is counted under. */
export interface FollowedReply {
  deployment: string;
  requestId: string;
  images: readonly string[];
  /** The key name that made the request. */
  owner: string | undefined;
  route: RunnerEndpointUrl | null;
  /** How its reply is timed; null for a job that is no model request. */
  operation: GenAiOperation | null;
}

/**
 * Counts a reply's usage where it is final (its end), by whichever replica reads the end first: the
 * ledger counts a request once, so a reply resumed or taken over by another replica is not counted again.
 * A job that is no model request (tokenizing) is not counted.
 */
export function countUsage(
  ledger: UsageLedger,
  { requestId, owner, deployment, route }: Pick<FollowedReply, 'requestId' | 'owner' | 'deployment' | 'route'>,
  at: number,
  usage: TokenUsage,
  logger: Pick<LoggerService, 'warn'>,
): void {
  if (!route || !owner) return;
  const entry = { requestId, at, key: owner, deployment, route, batch: false, usage };
  void ledger
    .count(entry)
    .catch((err: Error) => logger.warn(`Could not count the usage of ${requestId}: ${err.message}`));
}
