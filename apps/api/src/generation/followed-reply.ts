import type { LoggerService } from '@nestjs/common';
import type { TokenUsage } from '@conveyor/queue';
import type { GenAiOperation } from '../metrics/reply-timing.js';
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
}

/** OpenTelemetry's `gen_ai.operation.name` of each generating route. */
export const OPERATIONS: Record<RunnerEndpointUrl, GenAiOperation> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'text_completion',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'chat',
  '/v1/messages': 'chat',
};

/** What a resumed reply's id starts with, and the route it is counted under. */
export interface ResumedKind {
  idPrefix: string;
  route: RunnerEndpointUrl;
}

/**
 * Counts a reply's usage where it is final (its end), by whichever replica reads the end first: the
 * ledger counts a request once, so a reply resumed or taken over by another replica is not counted again.
 * A job that is no model request (tokenizing) is not counted.
 */
export function countUsage(
  ledger: UsageLedger,
  { requestId, owner, deployment, route }: Omit<FollowedReply, 'images'>,
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
