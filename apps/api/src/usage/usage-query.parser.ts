import { ErrorCode, type UsageGroupBy } from '@conveyor/openai';
import type { UsageBucketWidth } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** A completions usage query, read and checked. */
export interface UsageQuery {
  /** The first bucket's start, aligned down to the bucket width (seconds since the epoch). */
  start: number;
  /** Buckets start before this (seconds since the epoch). */
  end: number;
  width: UsageBucketWidth;
  groupBy: ReadonlySet<UsageGroupBy>;
  apiKeyIds: ReadonlySet<string> | null;
  models: ReadonlySet<string> | null;
  batch: boolean | null;
  limit: number;
}

/** Seconds per bucket of each width. */
export const WIDTH_SECONDS: Record<UsageBucketWidth, number> = { '1m': 60, '1h': 3600, '1d': 86_400 };

/** Buckets per page by width, default and most, as OpenAI's Usage API allows. */
const LIMITS: Record<UsageBucketWidth, { byDefault: number; most: number }> = {
  '1m': { byDefault: 60, most: 1440 },
  '1h': { byDefault: 24, most: 168 },
  '1d': { byDefault: 7, most: 31 },
};

const GROUP_BY: readonly UsageGroupBy[] = [
  'project_id',
  'user_id',
  'api_key_id',
  'model',
  'batch',
  'service_tier',
  'route',
];

const invalid = (message: string, param: string) =>
  OpenAiHttpError.invalidRequest(message, param, ErrorCode.invalidValue);

/** A query parameter's values: `name=a&name=b`, `name[]=a` (how OpenAI's clients send arrays) or `name=a,b`. */
function values(query: Record<string, unknown>, name: string): string[] | null {
  const raw = [query[name], query[`${name}[]`]].flat().filter((v): v is string => typeof v === 'string');
  return raw.length ? raw.flatMap((v) => v.split(',')).filter(Boolean) : null;
}

function integer(query: Record<string, unknown>, name: string): number | null {
  const [text, ...more] = values(query, name) ?? [];
  if (text === undefined) return null;
  if (more.length || !/^\d{1,12}$/.test(text)) throw invalid(`'${name}' must be a non-negative integer.`, name);
  return Number(text);
}

/** Reads the query of `GET /v1/organization/usage/completions`; bad input is a 400 naming the parameter. */
export function parseUsageQuery(query: Record<string, unknown>, now = Date.now()): UsageQuery {
  const startTime = integer(query, 'start_time');
  if (startTime === null)
    throw invalid("'start_time' is required: the Unix time (seconds) of the first bucket.", 'start_time');
  const [width = '1d', ...moreWidths] = values(query, 'bucket_width') ?? [];
  if (moreWidths.length || !(width in WIDTH_SECONDS))
    throw invalid("'bucket_width' must be one of '1m', '1h', '1d'.", 'bucket_width');
  const w = width as UsageBucketWidth;
  const end = integer(query, 'end_time') ?? Math.floor(now / 1000);
  if (end <= startTime) throw invalid("'end_time' must be after 'start_time'.", 'end_time');
  const groupBy = values(query, 'group_by') ?? [];
  const unknown = groupBy.find((g) => !GROUP_BY.includes(g as UsageGroupBy));
  if (unknown !== undefined) throw invalid(`'group_by' takes ${GROUP_BY.join(', ')}; got '${unknown}'.`, 'group_by');
  const limit = integer(query, 'limit') ?? LIMITS[w].byDefault;
  if (limit < 1 || limit > LIMITS[w].most)
    throw invalid(`'limit' must be from 1 to ${LIMITS[w].most} for bucket_width '${w}'.`, 'limit');
  const [batch, ...moreBatch] = values(query, 'batch') ?? [];
  if (moreBatch.length || (batch !== undefined && batch !== 'true' && batch !== 'false'))
    throw invalid("'batch' must be true or false.", 'batch');
  const page = values(query, 'page')?.[0];
  const from = page === undefined ? startTime : pageStart(page);
  const apiKeyIds = values(query, 'api_key_ids');
  const models = values(query, 'models');
  return {
    start: from - (from % WIDTH_SECONDS[w]),
    end,
    width: w,
    groupBy: new Set(groupBy as UsageGroupBy[]),
    apiKeyIds: apiKeyIds && new Set(apiKeyIds),
    models: models && new Set(models),
    batch: batch === undefined ? null : batch === 'true',
    limit,
  };
}

/** A page cursor: `page_` and the start of the page's first bucket. */
export const pageCursor = (start: number): string => `page_${start}`;

function pageStart(page: string): number {
  const match = /^page_(\d{1,12})$/.exec(page);
  if (!match) throw invalid("'page' must be a 'next_page' this route answered.", 'page');
  return Number(match[1]);
}
