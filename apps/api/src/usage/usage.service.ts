import { Injectable } from '@nestjs/common';
import type { UsageCompletionsPage } from '@conveyor/openai';
import { UsageLedger } from '../repositories/usage-ledger.port.js';
import { WIDTH_SECONDS, pageCursor, type UsageQuery } from './usage-query.parser.js';
import { toUsageResults } from './usage.mapper.js';

/**
 * Completions usage by time bucket, in the shape of OpenAI's Usage API: tokens in, out and cached and
 * requests, of every replica's replies and batch lines, filtered and grouped as the query asks.
 */
@Injectable()
export class UsageService {
  constructor(private readonly ledger: UsageLedger) {}

  async completions(query: UsageQuery): Promise<UsageCompletionsPage> {
    const seconds = WIDTH_SECONDS[query.width];
    const starts: number[] = [];
    for (let s = query.start; s < query.end && starts.length < query.limit; s += seconds) starts.push(s);
    const buckets = await this.ledger.read(query.width, starts);
    const next = starts.length ? starts[starts.length - 1]! + seconds : query.start;
    const hasMore = next < query.end;
    return {
      object: 'page',
      data: starts.map((start, i) => ({
        object: 'bucket',
        start_time: start,
        end_time: start + seconds,
        results: toUsageResults(
          (buckets[i] ?? []).filter(
            (g) =>
              (!query.apiKeyIds || query.apiKeyIds.has(g.key)) &&
              (!query.models || query.models.has(g.deployment)) &&
              (query.batch === null || query.batch === g.batch),
          ),
          query.groupBy,
        ),
      })),
      has_more: hasMore,
      next_page: hasMore ? pageCursor(next) : null,
    };
  }
}
