import { Inject, Injectable } from '@nestjs/common';
import type { Result } from 'ioredis';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { usageBucketKey, usageCountedKey, type UsageBucketWidth } from '@conveyor/queue';
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

declare module 'ioredis' {
  interface RedisCommander<Context> {
    countUsage(
      counted: string,
      minute: string,
      hour: string,
      day: string,
      countedMs: number,
      minuteMs: number,
      hourMs: number,
      dayMs: number,
      group: string,
      input: number,
      output: number,
      cached: number,
      requests: number,
    ): Result<number, Context>;
  }
}

type GroupKey = [key: string, deployment: string, route: string, batch: 0 | 1];

/** Usage buckets in Redis: a hash per bucket, a field per group and counter (`input ["team-a","qwen","/v1/chat/completions",0]`). */
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
      usageBucketKey(prefix, '1m', start('1m')),
      usageBucketKey(prefix, '1h', start('1h')),
      usageBucketKey(prefix, '1d', start('1d')),
      countedMs,
      USAGE_BUCKETS['1m'].keepMs,
      USAGE_BUCKETS['1h'].keepMs,
      USAGE_BUCKETS['1d'].keepMs,
      JSON.stringify(group),
      promptTokens,
      completionTokens,
      cachedTokens,
      1,
    );
    return counted === 1;
  }

  /** One read per bucket, sent together: on a cluster, days sit in different slots. */
  async read(width: UsageBucketWidth, starts: readonly number[]): Promise<UsageGroup[][]> {
    const prefix = this.config.redis.prefix;
    const hashes = await Promise.all(starts.map((s) => this.redis.hgetall(usageBucketKey(prefix, width, s))));
    return hashes.map(groupsOf);
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
