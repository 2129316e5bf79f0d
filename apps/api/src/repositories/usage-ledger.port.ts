import type { TokenUsage, UsageBucketWidth } from '@conveyor/queue';

/** What one finished reply or batch line used, and whose it was. */
export interface UsageEntry {
  /** The job's request id (a batch's part of results): a reply is counted once, however often it is read. */
  requestId: string;
  /** When the request was accepted (ms since the epoch): the bucket it counts in. */
  at: number;
  /** The API key's name (`anonymous` with authentication off), never the key. */
  key: string;
  deployment: string;
  /** The route that accepted it (`/v1/chat/completions`, ...); a batch line's, its batch's endpoint. */
  route: string;
  batch: boolean;
  usage: TokenUsage;
  /** Requests the entry stands for (default 1): a batch counts a part's lines as one entry. */
  requests?: number;
}

/** What one group (key, deployment, route, batch or not) used within a bucket. */
export interface UsageGroup {
  key: string;
  deployment: string;
  route: string;
  batch: boolean;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  requests: number;
}

/**
 * Usage by API key, deployment and route, counted in minute, hour and day buckets that every replica
 * shares. Services depend on this port; the repository keeping the buckets in Redis implements it.
 */
export abstract class UsageLedger {
  /** Counts a reply's usage into its buckets, unless that reply was counted already; true when counted now. */
  abstract count(entry: UsageEntry): Promise<boolean>;
  /**
   * Adds the counts of the last days not yet in their buckets to them (`now`: ms since the epoch), so
   * none lapses unread; `read` does the same for the days it reads.
   */
  abstract rollUp(now: number): Promise<void>;
  /** The groups of each bucket of `width` starting at `starts` (seconds since the epoch), in that order. */
  abstract read(width: UsageBucketWidth, starts: readonly number[]): Promise<UsageGroup[][]>;
}
