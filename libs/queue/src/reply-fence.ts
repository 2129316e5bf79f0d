import type { ReplyEvent } from './stream-events.js';

/**
 * The one rule for reading a reply stream, shared by the API (relaying it)
 * and a worker resuming a job (rebuilding what was already said): once an
 * attempt has started, events of earlier attempts are late and dropped, and
 * an event whose seq was already seen in its attempt is a repeat.
 */
export class ReplyFence {
  private attempt = 0;
  private lastSeq = -1;

  accept(event: ReplyEvent): boolean {
    if (event.attempt < this.attempt) return false;
    if (event.attempt > this.attempt) {
      this.attempt = event.attempt;
      this.lastSeq = -1;
    }
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    return true;
  }
}

/** What a client has been told so far, from the events of a reply stream in order. */
export function replayReply(events: Iterable<ReplyEvent>): { text: string; ended: boolean } {
  const fence = new ReplyFence();
  let text = '';
  let ended = false;
  for (const event of events) {
    if (!fence.accept(event)) continue;
    if (event.type === 'delta') text += event.text;
    if (event.type === 'end' || event.type === 'error') ended = true;
  }
  return { text, ended };
}
