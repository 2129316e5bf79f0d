import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  batchDoneKey,
  batchDoneLinesKey,
  batchInflightKey,
  batchKey,
  batchLeaseKey,
  batchResultsKey,
  type BatchLineResult,
} from '@conveyor/queue';
import { CommandConnection, Leases, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { BatchLines, type CollectedResults, type InflightLine } from './batch-lines.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    commitBatchResults(
      lease: string,
      done: string,
      inflight: string,
      results: string,
      record: string,
      holder: string,
      written: string,
      lines: string,
      taken: number,
      completed: number,
      failed: number,
      outputParts: number,
      errorParts: number,
      promptTokens: number,
      cachedTokens: number,
      foldedTokens: number,
    ): Result<number, Context>;
  }
}

/**
 * The per-line state of running batches in Redis: the window of lines in flight, the results
 * workers hand back, the custom_ids already written, and which API replica drives the batch.
 */
@Injectable()
export class BatchLineRepository extends BatchLines {
  private readonly redis: RedisClient;
  private readonly leases: Leases;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
    this.leases = new Leases(redis);
    this.prefix = config.redis.prefix;
  }

  /** Whether `holder` drives the batch right now. */
  holdsLease(batchId: string, holder: string): Promise<boolean> {
    return this.leases.holds(batchLeaseKey(this.prefix, batchId), holder);
  }

  /** Which of `customIds` are already written. */
  async doneAmong(batchId: string, lines: readonly number[]): Promise<Set<number>> {
    if (!lines.length) return new Set();
    const gets = lines.flatMap((line) => ['GET', 'u1', String(line)]);
    const bits = (await this.redis.call('BITFIELD', batchDoneLinesKey(this.prefix, batchId), ...gets)) as number[];
    return new Set(lines.filter((_, i) => bits[i] === 1));
  }

  /** Commits a collection (see scripts/commit-batch-results.lua); false when another replica drives the batch now, and nothing changed. */
  async commit(batchId: string, holder: string, c: CollectedResults): Promise<boolean> {
    const p = this.prefix;
    const applied = await this.redis.commitBatchResults(
      batchLeaseKey(p, batchId),
      batchDoneLinesKey(p, batchId),
      batchInflightKey(p, batchId),
      batchResultsKey(p, batchId),
      batchKey(p, batchId),
      holder,
      JSON.stringify(c.written),
      JSON.stringify(c.lines.map(String)),
      c.taken,
      c.completed,
      c.failed,
      c.outputParts,
      c.errorParts,
      c.tokens.prompt,
      c.tokens.cached,
      c.tokens.folded,
    );
    return applied === 1;
  }

  /** Takes or renews the batch's lease for `holder`; false while another replica holds it. */
  holdLease(batchId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.leases.hold(batchLeaseKey(this.prefix, batchId), holder, ttlMs);
  }

  async releaseLease(batchId: string, holder: string): Promise<void> {
    await this.leases.release(batchLeaseKey(this.prefix, batchId), holder);
  }

  async addInflight(batchId: string, line: number, entry: InflightLine): Promise<void> {
    await this.redis.hset(batchInflightKey(this.prefix, batchId), String(line), JSON.stringify(entry));
  }

  async inflightCount(batchId: string): Promise<number> {
    return this.redis.hlen(batchInflightKey(this.prefix, batchId));
  }

  /** Every line in flight, by line number. */
  async inflight(batchId: string): Promise<Map<number, InflightLine>> {
    const hash = await this.redis.hgetall(batchInflightKey(this.prefix, batchId));
    return new Map(Object.entries(hash).map(([line, entry]) => [Number(line), JSON.parse(entry) as InflightLine]));
  }

  async removeInflight(batchId: string, line: number): Promise<void> {
    await this.redis.hdel(batchInflightKey(this.prefix, batchId), String(line));
  }

  /** A finished line's result, as a worker (or the failure watcher) hands it to the batch. */
  async pushResult(batchId: string, result: BatchLineResult): Promise<void> {
    await this.redis.rpush(batchResultsKey(this.prefix, batchId), JSON.stringify(result));
  }

  /** The oldest `count` results not yet written. */
  async pendingResults(batchId: string, count: number): Promise<BatchLineResult[]> {
    const items = await this.redis.lrange(batchResultsKey(this.prefix, batchId), 0, count - 1);
    return items.map((item) => JSON.parse(item) as BatchLineResult);
  }

  async pendingResultCount(batchId: string): Promise<number> {
    return this.redis.llen(batchResultsKey(this.prefix, batchId));
  }

  /** Removes every per-line key of a batch that has ended: only its record and files remain. */
  async clear(batchId: string): Promise<void> {
    await this.redis.del(
      batchDoneLinesKey(this.prefix, batchId),
      batchDoneKey(this.prefix, batchId),
      batchInflightKey(this.prefix, batchId),
      batchResultsKey(this.prefix, batchId),
      batchLeaseKey(this.prefix, batchId),
    );
  }
}
