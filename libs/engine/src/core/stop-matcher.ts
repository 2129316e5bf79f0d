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

  /** The text that is safe to send now, and whether a stop string ended the reply (the text before it is sent). */
  push(text: string): { text: string; stopped: boolean } {
    if (!this.stops.length) return { text, stopped: false };
    const buffer = this.held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.held = '';
      return { text: buffer.slice(0, cut), stopped: true };
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
