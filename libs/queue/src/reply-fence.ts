import type { ReplyEvent } from './stream-events.js';

/**
 * What the fence makes of an event: `accept` it, `drop` it (a repeat, or a replaced attempt's), or
 * `gap`: events before it are missing (entries a failover lost: acknowledged by a primary that died
 * before its replica had them, while the worker went on writing to the new one).
 */
export type FenceVerdict = 'accept' | 'drop' | 'gap';

/**
 * The one rule for reading a reply stream, shared by the API (relaying it)
 * and a worker resuming a job (rebuilding what was already said): once an
 * attempt has started, events of earlier attempts are late and dropped, and
 * an event whose seq was already seen in its attempt is a repeat. An attempt's
 * events are numbered from 0 without holes, so a seq beyond the next one is a gap.
 */
export class ReplyFence {
  private attempt = 0;
  private lastSeq = -1;

  verdict(event: ReplyEvent): FenceVerdict {
    if (event.attempt < this.attempt) return 'drop';
    if (event.attempt > this.attempt) {
      this.attempt = event.attempt;
      this.lastSeq = -1;
    }
    if (event.seq <= this.lastSeq) return 'drop';
    const gap = event.seq > this.lastSeq + 1;
    this.lastSeq = event.seq;
    return gap ? 'gap' : 'accept';
  }

  /** Whether to use the event, a gap notwithstanding (rebuilding what a client was shown keeps what there is). */
  accept(event: ReplyEvent): boolean {
    return this.verdict(event) !== 'drop';
  }
}

/** What a reply's client has been told so far: its text, the tokens generated for it, and whether it ended. */
export interface SentReply {
  text: string;
  tokens: number;
  ended: boolean;
}

/** What a client has been told so far, from the events of a reply stream in order. */
export function replayReply(events: Iterable<ReplyEvent>): SentReply {
  const fence = new ReplyFence();
  let text = '';
  let tokens = 0;
  let ended = false;
  for (const event of events) {
    if (!fence.accept(event)) continue;
    if (event.type === 'delta') {
      text += event.text;
      // Each delta carries the count so far, earlier attempts' included.
      tokens = event.tokens ?? tokens;
    }
    if (event.type === 'end' || event.type === 'error') ended = true;
  }
  return { text, tokens, ended };
}
