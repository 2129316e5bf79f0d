import type { TokenWindowWidth } from '@conveyor/queue';

/** Each window of a token quota, in milliseconds: fixed windows, as the request rate limit's are. */
export const TOKEN_WINDOW_MS: Record<TokenWindowWidth, number> = { minute: 60_000, day: 86_400_000 };

/** The number of the window of `width` that `at` (ms since the epoch) falls in; days are UTC days. */
export const tokenWindowOf = (width: TokenWindowWidth, at: number): number => Math.floor(at / TOKEN_WINDOW_MS[width]);

/** When (ms since the epoch) the window of `width` that `at` falls in ends. */
export const tokenWindowEnd = (width: TokenWindowWidth, at: number): number =>
  (tokenWindowOf(width, at) + 1) * TOKEN_WINDOW_MS[width];

/** A key's token limits; null: none in that window. */
export interface TokenLimits {
  perMinute: number | null;
  perDay: number | null;
}

/** What a reservation found: whether it was made (or which window refused it), and each window's count. */
export interface TokenReservation {
  /** null: reserved; otherwise the window that has no room for it (nothing was reserved). */
  refusedBy: TokenWindowWidth | null;
  /** Tokens counted in each window: after the reservation when it was made, as they stand when refused. */
  used: Record<TokenWindowWidth, number>;
}

/**
 * Token counters per API key, in a minute and a day window that every replica shares, and the holds a
 * request or a batch reserves in them until its real usage replaces them. Services depend on this port;
 * the repository keeping them in Redis implements it.
 */
export abstract class TokenQuotas {
  /** Reserves a request's `tokens` in both windows of `at` when neither would go over its limit. */
  abstract reserve(
    keyName: string,
    requestId: string,
    tokens: number,
    limits: TokenLimits,
    at: number,
  ): Promise<TokenReservation>;

  /**
   * Replaces a request's hold (reserved at `reservedAt`) by the tokens it `used`, counted in the windows of
   * `now`; false when it had no hold (settled already, or lapsed).
   */
  abstract settle(keyName: string, requestId: string, reservedAt: number, used: number, now: number): Promise<boolean>;

  /**
   * Reserves a batch's `tokens` for its `lines` against the day of `at` when the day has room; a batch
   * that reserved before is not reserved again. Returns whether it was, and the day's count.
   */
  abstract reserveBatch(
    keyName: string,
    batchId: string,
    tokens: number,
    lines: number,
    perDay: number,
    at: number,
  ): Promise<{ reserved: boolean; dayUsed: number }>;

  /**
   * Settles `lines` of a batch (reserved at `reservedAt`) that ended having used `used` tokens, or, with
   * `ended`, the whole batch: what it still holds comes off.
   */
  abstract settleBatch(
    keyName: string,
    batchId: string,
    reservedAt: number,
    settled: { lines: number; used: number; ended: boolean },
    now: number,
  ): Promise<void>;
}
