/** How the cadence waits: for the end of the current event-loop turn, or for a time. */
export interface CadenceClock {
  now(): number;
  /** Runs `fn` once the current turn's work (its microtasks) is done. */
  afterTurn(fn: () => void): void;
  /** Runs `fn` after `ms`; returns what cancels it. */
  after(fn: () => void, ms: number): () => void;
}

export const systemClock: CadenceClock = {
  now: () => Date.now(),
  afterTurn: (fn) => setImmediate(fn),
  after: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** The longest an event waits for a next round that does not come (the last tokens of a reply, an idle engine). */
export const MAX_WAIT_MS = 50;

/**
 * When a worker's reply outbox writes. An engine produces its replies' tokens in rounds (one decode,
 * then every running reply samples), and a round's output arrives in one event-loop turn. Writing
 * at the end of every round costs the broker a command per round, and the API a read; writing the
 * events of a round at the end of the NEXT round halves both, and a client still sees each token
 * within one engine round of its being generated. An end or an error is written at the end of its
 * own round (a finished reply is not held back), and events no next round follows are written after
 * about a round's time (MAX_WAIT_MS at most).
 */
export class FlushCadence {
  private round = 0;
  private turnOpen = false;
  /** The round of the oldest event not yet written; null when none waits. */
  private oldest: number | null = null;
  private urgent = false;
  private lastRoundAt: number | null = null;
  /** Time between rounds, smoothed: how long to wait for a next round before writing anyway. */
  private gapMs: number | null = null;
  private cancelWait: (() => void) | null = null;

  constructor(
    private readonly flush: () => void,
    private readonly clock: CadenceClock = systemClock,
  ) {}

  /** Events were added in this turn; `urgent` for an end or an error. */
  added(urgent: boolean): void {
    if (!this.turnOpen) {
      this.turnOpen = true;
      this.round++;
      const now = this.clock.now();
      if (this.lastRoundAt !== null) {
        const gap = Math.min(now - this.lastRoundAt, MAX_WAIT_MS);
        this.gapMs = this.gapMs === null ? gap : 0.8 * this.gapMs + 0.2 * gap;
      }
      this.lastRoundAt = now;
      this.clock.afterTurn(() => this.endOfTurn());
    }
    this.oldest ??= this.round;
    this.urgent ||= urgent;
  }

  private endOfTurn(): void {
    this.turnOpen = false;
    if (this.oldest === null) return;
    if (this.urgent || this.oldest < this.round) return this.write();
    const wait = Math.ceil(1.5 * (this.gapMs ?? MAX_WAIT_MS / 2));
    this.cancelWait ??= this.clock.after(() => this.write(), Math.max(1, wait));
  }

  private write(): void {
    this.cancelWait?.();
    this.cancelWait = null;
    this.oldest = null;
    this.urgent = false;
    this.flush();
  }
}
