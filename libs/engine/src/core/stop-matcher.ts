/** What a piece of text came to: the part safe to send now, and the stop string that ended the text, if one did. */
export type StopMatch = { text: string; stopped: false } | { text: string; stopped: true; matched: string };

/**
 * Finds stop strings in streamed text. Text that could be the start of a stop
 * string is held back until the next piece shows it is not, so a client never
 * receives part of a stop string, however the model splits it into tokens.
 */
export class StopMatcher {
  private held = '';
  private readonly longest: number;

  constructor(private readonly stops: readonly string[]) {
    this.longest = Math.max(0, ...stops.map((s) => s.length));
  }

  /**
   * The text that is safe to send now, and whether a stop string ended the reply (the text before it is
   * sent); `matched`: that stop string (the earliest to start; of two starting there, the first listed).
   */
  push(text: string): StopMatch {
    if (!this.stops.length) return { text, stopped: false };
    const buffer = this.held + text;
    let cut = -1;
    let matched = '';
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        matched = stop;
      }
    }
    if (cut >= 0) {
      this.held = '';
      return { text: buffer.slice(0, cut), stopped: true, matched };
    }
    const keep = this.partialStopSuffix(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** Text held back when the reply ends for another reason: it was no stop string after all. */
  flush(): string {
    const text = this.held;
    this.held = '';
    return text;
  }

  /** Length of the longest end of `buffer` that begins some stop string. */
  private partialStopSuffix(buffer: string): number {
    for (let n = Math.min(this.longest - 1, buffer.length); n > 0; n--) {
      const tail = buffer.slice(buffer.length - n);
      if (this.stops.some((s) => s.startsWith(tail))) return n;
    }
    return 0;
  }
}

/**
 * Each choice's stop sequence, as a generation's result reports it: the stop string that ended the
 * choice when the request asked for it, null for a choice that ended otherwise; absent when no choice
 * ended on one. A string the request did not ask for (a chat template's textual end marker, which
 * engines also stop at) is the model ending its turn, not a stop sequence.
 */
export function requestedStops(
  matched: ReadonlyArray<string | undefined>,
  requested: readonly string[],
): { stopSequences?: Array<string | null> } {
  const stops = matched.map((m) => (m !== undefined && requested.includes(m) ? m : null));
  return stops.some((s) => s !== null) ? { stopSequences: stops } : {};
}
