import { Inject, Injectable } from '@nestjs/common';
import type { Result } from 'ioredis';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  usageBucketKey,
  usageCountedKey,
  usageDayPrefix,
  usageNewKey,
  usageNewMinutesKey,
  type UsageBucketWidth,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { UsageLedger, type UsageEntry, type UsageGroup } from './usage-ledger.port.js';

const DAY_MS = 86_400_000;

/** Each bucket width's length, and how long its buckets are kept: past what the Usage API lets one query reach back. */
export const USAGE_BUCKETS: Record<UsageBucketWidth, { seconds: number; keepMs: number }> = {
  '1m': { seconds: 60, keepMs: 2 * DAY_MS },
  '1h': { seconds: 3600, keepMs: 35 * DAY_MS },
  '1d': { seconds: 86_400, keepMs: 400 * DAY_MS },
};

/** A bucket's counters, one field each per group. */
type Counter = 'input' | 'output' | 'cached' | 'requests';

/** How far back a count may land (a reply counts in the minute its request was accepted): the days a periodic pass folds. */
const ROLL_UP_DAYS = 3;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    countUsage(
      counted: string,
      fresh: string,
      freshMinutes: string,
      countedMs: number,
      freshMs: number,
      group: string,
      input: number,
      output: number,
      cached: number,
      requests: number,
      minute: number,
    ): Result<number, Context>;
    rollUpUsage(
      freshMinutes: string,
      dayPrefix: string,
      minuteMs: number,
      hourMs: number,
      dayMs: number,
    ): Result<number, Context>;
  }
}

type GroupKey = [key: string, deployment: string, route: string, batch: 0 | 1];

/**
 * Usage buckets in Redis: a hash per bucket, a field per group and counter (`input ["team-a","qwen","/v1/chat/completions",0]`).
 * A reply is counted into its minute's new counts alone; a day's new counts are added to their minute,
 * hour and day buckets in one script when a read reaches that day, and by every replica's periodic pass
 * (`rollUp`) long before they lapse, so each bucket reads as if every reply had been added to all three.
 */
@Injectable()
export class UsageRepository extends UsageLedger {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async count(entry: UsageEntry): Promise<boolean> {
    const prefix = this.config.redis.prefix;
    const at = Math.floor(entry.at / 1000);
    const start = (width: UsageBucketWidth) => at - (at % USAGE_BUCKETS[width].seconds);
    const group: GroupKey = [entry.key, entry.deployment, entry.route, entry.batch ? 1 : 0];
    const { promptTokens, completionTokens, cachedTokens = 0 } = entry.usage;
    // A reply may be read again until its record expires, REPLY_TTL_MS after it ended.
    const countedMs = this.config.redis.replyTtlMs + this.config.api.requestTimeoutMs + 3_600_000;
    const counted = await this.redis.countUsage(
      usageCountedKey(prefix, at, entry.requestId),
      usageNewKey(prefix, start('1m')),
      usageNewMinutesKey(prefix, at),
      countedMs,
      USAGE_BUCKETS['1m'].keepMs,
      JSON.stringify(group),
      promptTokens,
      completionTokens,
      cachedTokens,
      entry.requests ?? 1,
      start('1m'),
    );
    return counted === 1;
  }

  /**
   * Each day the buckets fall in has its new counts added first, so the read sees every reply counted
   * before it; then one read per bucket, sent together: on a cluster, days sit in different slots.
   */
  async read(width: UsageBucketWidth, starts: readonly number[]): Promise<UsageGroup[][]> {
    const prefix = this.config.redis.prefix;
    const days = new Set(starts.map((s) => Math.floor(s / 86_400)));
    await Promise.all([...days].map((day) => this.rollUpDay(day * 86_400)));
    const hashes = await Promise.all(starts.map((s) => this.redis.hgetall(usageBucketKey(prefix, width, s))));
    return hashes.map(groupsOf);
  }

  async rollUp(now: number): Promise<void> {
    const today = Math.floor(now / 86_400_000);
    await Promise.all(Array.from({ length: ROLL_UP_DAYS }, (_, i) => this.rollUpDay((today - i) * 86_400)));
  }

  private async rollUpDay(daySeconds: number): Promise<void> {
    const prefix = this.config.redis.prefix;
    await this.redis.rollUpUsage(
      usageNewMinutesKey(prefix, daySeconds),
      usageDayPrefix(prefix, daySeconds),
      USAGE_BUCKETS['1m'].keepMs,
      USAGE_BUCKETS['1h'].keepMs,
      USAGE_BUCKETS['1d'].keepMs,
    );
  }
}

/** A bucket's hash as its groups. */
function groupsOf(hash: Record<string, string>): UsageGroup[] {
  const groups = new Map<string, UsageGroup>();
  for (const [field, value] of Object.entries(hash)) {
    const space = field.indexOf(' ');
    const counter = field.slice(0, space) as Counter;
    const id = field.slice(space + 1);
    let group = groups.get(id);
    if (!group) {
      const [key, deployment, route, batch] = JSON.parse(id) as GroupKey;
      group = {
        key,
        deployment,
        route,
        batch: batch === 1,
        inputTokens: 0,
        outputTokens: 0,
        cachedTokens: 0,
        requests: 0,
      };
      groups.set(id, group);
    }
    const n = Number(value) || 0;
    if (counter === 'input') group.inputTokens += n;
    else if (counter === 'output') group.outputTokens += n;
    else if (counter === 'cached') group.cachedTokens += n;
    else if (counter === 'requests') group.requests += n;
  }
  return [...groups.values()];
}
