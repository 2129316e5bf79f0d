import { decodeReplyGroup, decodeReplyRecord } from './reply-codec.js';
import { replyRecordKey } from './keys.js';
import type { ReplyEvent } from './stream-events.js';

/** The two reads a reply's history takes, as any Redis client offers them. */
export interface ReplyHistorySource {
  get(key: string): Promise<string | null>;
  xrange(key: string, start: string, end: string, count: 'COUNT', n: number): Promise<[string, string[]][]>;
}

/** Entries read at a time when a reply's events are gathered from an inbox. */
const PAGE = 1000;

/**
 * Every event of a reply written so far, in order: its record once it has ended (`ended` true), else
 * its events among the inbox's entries since its job was queued (`since`, ms). A reply's events are
 * one field among the entry's fields, named by its request id. Read when a job is retried (what was
 * sent) and when a client resumes a reply: rare, so a scan of the inbox is fine.
 */
export async function readReplyHistory(
  redis: ReplyHistorySource,
  prefix: string,
  inbox: string,
  requestId: string,
  since: number,
): Promise<{ events: ReplyEvent[]; ended: boolean }> {
  const record = await redis.get(replyRecordKey(prefix, requestId));
  if (record) return { events: decodeReplyRecord(record), ended: true };
  const events: ReplyEvent[] = [];
  // A second early: the job's clock and Redis's may differ a little.
  let from = `${Math.max(0, since - 1000)}-0`;
  for (;;) {
    const entries = await redis.xrange(inbox, from, '+', 'COUNT', PAGE);
    for (const [, fields] of entries)
      for (let i = 0; i + 1 < fields.length; i += 2)
        if (fields[i] === requestId) events.push(...decodeReplyGroup(fields[i + 1]!));
    if (entries.length < PAGE) return { events, ended: false };
    from = `(${entries[entries.length - 1]![0]}`;
  }
}
