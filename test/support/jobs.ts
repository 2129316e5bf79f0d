import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { readReplyHistory, replyInboxKey, type ReplyEvent } from '@conveyor/queue';
import type { ManagedProcess } from './platform.js';

/**
 * How long a test waits for something it expects to happen (a job to fail, a process to exit, a write to
 * land). A bound, not a target: on a loaded machine these take many times their usual milliseconds, and
 * the bound is there only to name what never happened before jest's own timeout (60 s) does. How fast they
 * happen is measured in bench/, not asserted.
 */
export const EVENTUALLY_MS = 30_000;

/** Resolves with what `probe` gives once it gives something, asking every 20 ms until `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`${what} not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The worker process currently holding the active job (from BullMQ's processedBy = host:pid). */
export async function holderOf(queue: Queue, workers: ManagedProcess[], jobId?: string): Promise<ManagedProcess> {
  return waitFor(
    async () => {
      const active = (await queue.getActive()).filter((j) => !jobId || j.id === jobId);
      const pid = Number(active[0]?.processedBy?.split(':').pop());
      return workers.find((w) => w.proc.pid === pid && w.proc.exitCode === null && w.proc.signalCode === null);
    },
    EVENTUALLY_MS,
    'an active job on a live worker',
  );
}

/**
 * Every event of a request's reply as written: its record once it has ended, else its events in the
 * inboxes of the prefix's API replicas (a test does not know which replica its request went through).
 */
export async function replyEvents(redisUrl: string, prefix: string, requestId: string): Promise<ReplyEvent[]> {
  const redis = new Redis(redisUrl);
  try {
    const inboxes = await redis.keys(replyInboxKey(prefix, '*'));
    const events: ReplyEvent[] = [];
    for (const inbox of inboxes.length ? inboxes : [replyInboxKey(prefix, 'none')]) {
      const history = await readReplyHistory(redis, prefix, inbox, requestId, 0);
      if (history.ended) return history.events;
      events.push(...history.events);
    }
    return events;
  } finally {
    redis.disconnect();
  }
}

/**
 * When attempt 2 (or later) of a reply started: the id (Redis's clock, in ms) of the inbox entry holding
 * its start event. An entry holds a field per reply, `[attempt, firstSeq, ...events]`, a start being
 * `[0, ...]` (libs/queue/src/reply-codec.ts). Poll it while the reply runs: the API trims what it has
 * relayed. `since`: the earliest time worth reading from.
 */
export function takeoverStartedAt(redis: Redis, prefix: string, requestId: string, since = 0): Promise<number> {
  return waitFor(
    async () => {
      for (const inbox of await redis.keys(replyInboxKey(prefix, '*')))
        for (const [id, fields] of await redis.xrange(inbox, since > 0 ? `${since - 1000}-0` : '-', '+'))
          for (let i = 0; i + 1 < fields.length; i += 2) {
            if (fields[i] !== requestId) continue;
            const [attempt, , ...events] = JSON.parse(fields[i + 1]!) as [number, number, ...unknown[][]];
            if (attempt >= 2 && events.some((e) => e[0] === 0)) return Number(id.split('-')[0]);
          }
      return undefined;
    },
    60_000,
    'attempt 2 to start',
  );
}

/** A streamed reply read chunk by chunk, so a test can act mid-stream. */
export class SseReader {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  readonly payloads: string[] = [];
  readonly ids: Array<number | null> = [];

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Reads until `count` more payloads arrived or the stream ended; returns false at the end. */
  async next(count = 1): Promise<boolean> {
    const target = this.payloads.length + count;
    while (this.payloads.length < target) {
      const { value, done } = await this.reader.read();
      if (done) return false;
      this.buffer += this.decoder.decode(value, { stream: true });
      let at: number;
      while ((at = this.buffer.indexOf('\n\n')) >= 0) {
        const block = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 2);
        const lines = block.split('\n');
        const data = lines.find((l) => l.startsWith('data: '));
        const id = lines.find((l) => l.startsWith('id: '));
        if (data) {
          this.payloads.push(data.slice(6));
          this.ids.push(id ? Number(id.slice(4)) : null);
        }
      }
    }
    return true;
  }

  async rest(): Promise<string[]> {
    while (await this.next(1));
    return this.payloads;
  }
}
