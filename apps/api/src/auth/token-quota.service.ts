import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import type { TokenWindowWidth } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import {
  TokenQuotas,
  tokenWindowEnd,
  type TokenLimits,
  type TokenReservation,
} from '../repositories/token-quotas.port.js';
import { ApiKeyStore } from './api-key.store.js';

/** How OpenAI names each window in its rate-limit messages. */
const WINDOW_NAMES: Record<TokenWindowWidth, string> = { minute: 'tokens per min (TPM)', day: 'tokens per day (TPD)' };

/** Seconds until the window of `width` that `at` falls in ends, at least 1 (the request headers' rounding). */
const resetSeconds = (width: TokenWindowWidth, at: number): number =>
  Math.max(1, Math.ceil((tokenWindowEnd(width, at) - at) / 1000));

/**
 * Token quotas per API key (`tokenLimit`: per minute and per day, input and output together). A request
 * reserves its estimated tokens in both windows as it is admitted, or is refused with a 429 when either
 * has no room; its real usage replaces the reservation when its reply ends. A batch reserves against the
 * day only, when it starts, and its lines settle as they end. The counters are shared by every replica.
 */
@Injectable()
export class TokenQuota {
  private readonly logger = new Logger(TokenQuota.name);

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly quotas: TokenQuotas,
  ) {}

  /**
   * Reserves a request's estimated `tokens` for `caller`; throws the 429 (with the token headers and
   * `retry-after`) when a window would go over. Returns the token headers to send, or null when the
   * caller has no token limit (nothing is reserved, nothing is read).
   */
  async reserve(caller: string, requestId: string, tokens: number, at: number): Promise<Record<string, string> | null> {
    const limits = await this.limitsOf(caller);
    if (!limits) return null;
    const reservation = await this.quotas.reserve(caller, requestId, tokens, limits, at).catch(() => {
      throw OpenAiHttpError.unavailable('The token quota is unavailable; try again shortly.');
    });
    const { refusedBy } = reservation;
    if (!refusedBy) return headersOf(limits, reservation, at);
    const limit = limits[refusedBy === 'minute' ? 'perMinute' : 'perDay'] as number;
    const headers = headersOf(limits, reservation, at, refusedBy);
    const wait = resetSeconds(refusedBy, at);
    const message =
      tokens > limit
        ? `Request too large on ${WINDOW_NAMES[refusedBy]}: Limit ${limit}, Requested ${tokens}. ` +
          'Reduce the prompt or max_tokens to run it.'
        : `Rate limit reached on ${WINDOW_NAMES[refusedBy]}: Limit ${limit}, Used ${reservation.used[refusedBy]}, ` +
          `Requested ${tokens}. Please try again in ${wait}s.`;
    throw new OpenAiHttpError(429, 'rate_limit_error', message, null, ErrorCode.rateLimitExceeded, {
      ...headers,
      'retry-after': String(wait),
    });
  }

  /**
   * Replaces a request's reservation by the tokens it `used`. Best effort: a reservation left unsettled
   * stays counted until its windows end.
   */
  async settle(caller: string, requestId: string, reservedAt: number, used: number): Promise<void> {
    if (!(await this.limitsOf(caller))) return;
    await this.quotas.settle(caller, requestId, reservedAt, used, Date.now()).catch((err: Error) => {
      this.logger.warn(`Could not settle the tokens of ${requestId}: ${err.message}`);
    });
  }

  /**
   * Reserves a batch's estimated `tokens` against its owner's daily quota; the error to fail the batch with
   * when the day has no room for them, or null (reserved, or the owner has no daily limit).
   */
  async reserveBatch(
    owner: string,
    batchId: string,
    { tokens, lines }: { tokens: number; lines: number },
    at: number,
  ): Promise<BatchError | null> {
    const perDay = (await this.limitsOf(owner))?.perDay;
    if (!perDay) return null;
    const { reserved, dayUsed } = await this.quotas.reserveBatch(owner, batchId, tokens, lines, perDay, at);
    if (reserved) return null;
    return {
      code: ErrorCode.tokenLimitExceeded,
      message:
        `Enqueued token limit reached: the batch's estimated ${tokens} tokens and the ${dayUsed} already ` +
        `used or reserved today exceed the key's limit of ${perDay} ${WINDOW_NAMES.day}. ` +
        `Retry in ${resetSeconds('day', at)}s, or submit a smaller batch.`,
      param: null,
      line: null,
    };
  }

  /**
   * Settles a batch's `lines` that ended having used `used` tokens, or, `ended`, what the batch still holds
   * (lines that never ran). Best effort, as a request's settling.
   */
  async settleBatch(
    owner: string,
    batchId: string,
    reservedAt: number,
    settled: { lines: number; used: number; ended: boolean },
  ): Promise<void> {
    if (!(await this.limitsOf(owner))?.perDay) return;
    await this.quotas.settleBatch(owner, batchId, reservedAt, settled, Date.now()).catch((err: Error) => {
      this.logger.warn(`Could not settle the tokens of batch ${batchId}: ${err.message}`);
    });
  }

  private async limitsOf(caller: string): Promise<TokenLimits | null> {
    const limit = (await this.keys.byName(caller))?.tokenLimit;
    if (!limit?.perMinute && !limit?.perDay) return null;
    return { perMinute: limit.perMinute ?? null, perDay: limit.perDay ?? null };
  }
}

/**
 * OpenAI's token headers, of one window: the one that refused, or the one with the least room left (the
 * minute when both have as much), so a client pacing itself on them paces on what binds first.
 */
function headersOf(
  limits: TokenLimits,
  { used }: TokenReservation,
  at: number,
  refusedBy?: TokenWindowWidth,
): Record<string, string> {
  const windows = (['minute', 'day'] as const)
    .map((width) => ({ width, limit: width === 'minute' ? limits.perMinute : limits.perDay }))
    .filter((w): w is { width: TokenWindowWidth; limit: number } => w.limit !== null)
    .map((w) => ({ ...w, remaining: Math.max(0, w.limit - used[w.width]) }));
  const shown =
    windows.find((w) => w.width === refusedBy) ??
    windows.reduce((least, w) => (w.remaining < least.remaining ? w : least));
  return {
    'x-ratelimit-limit-tokens': String(shown.limit),
    'x-ratelimit-remaining-tokens': String(shown.remaining),
    'x-ratelimit-reset-tokens': `${resetSeconds(shown.width, at)}s`,
  };
}
