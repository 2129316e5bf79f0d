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
 * then every running reply samples). Writing at the end of every round costs the broker a command per
 * round, and the API a read; writing the events of a round at the end of the NEXT round halves both, and
 * a client still sees each token within one engine round of its being generated.
 *
 * Where the engine says when its rounds end (`roundEnded`: the in-process engine, whose replies' samples
 * come back in separate event-loop turns), rounds are counted by that signal, so one write carries two
 * whole rounds of every running reply; an engine without rounds of its own beside it (a llama-server
 * child in the same worker) then has its events written with the next round's, or after about a
 * round's time. Where no engine signals, an event-loop turn stands for a round: an engine answering
 * over HTTP delivers a round's output in one turn. A reply's first output, an end or an error is
 * written at the end of its own turn (neither a reply's first token nor a finished reply is held
 * back), and events no next round follows are written after
 * about a round's time (MAX_WAIT_MS at most).
 */
export class FlushCadence {
  private turn = 0;
  private turnOpen = false;
  /** Round signals so far. */
  private signals = 0;
  /** The turn, and the signal count, of the oldest event not yet written; null when none waits. */
  private oldestTurn: number | null = null;
  private oldestSignal: number | null = null;
  private urgent = false;
  private lastRoundAt: number | null = null;
  /** Time between rounds, smoothed: how long to wait for a next round before writing anyway. */
  private gapMs: number | null = null;
  private cancelWait: (() => void) | null = null;

  constructor(
    private readonly flush: () => void,
    private readonly clock: CadenceClock = systemClock,
  ) {}

  /** Events were added in this turn; `urgent` for a reply's first output, an end or an error. */
  added(urgent: boolean): void {
    if (!this.turnOpen) {
      this.turnOpen = true;
      this.turn++;
      if (!this.signals) this.roundAt(this.clock.now());
      this.clock.afterTurn(() => this.endOfTurn());
    }
    this.oldestTurn ??= this.turn;
    this.oldestSignal ??= this.signals;
    this.urgent ||= urgent;
  }

  /** The engine ended a round: what the round before it produced is due now. */
  roundEnded(): void {
    this.roundAt(this.clock.now());
    this.signals++;
    if (this.oldestSignal === null) return;
    if (this.signals - this.oldestSignal >= 2) return this.write();
    this.waitForNextRound(true);
  }

  private roundAt(now: number): void {
    if (this.lastRoundAt !== null) {
      const gap = Math.min(now - this.lastRoundAt, MAX_WAIT_MS);
      this.gapMs = this.gapMs === null ? gap : 0.8 * this.gapMs + 0.2 * gap;
    }
    this.lastRoundAt = now;
  }

  private endOfTurn(): void {
    this.turnOpen = false;
    if (this.oldestTurn === null) return;
    if (this.urgent) return this.write();
    if (this.signals) return this.waitForNextRound(false);
    if (this.oldestTurn < this.turn) return this.write();
    this.waitForNextRound(false);
  }

  /** Writes after about a round's time unless a round comes first; `restart`: from now, not from an earlier wait. */
  private waitForNextRound(restart: boolean): void {
    if (restart) this.cancel();
    const wait = Math.ceil(1.5 * (this.gapMs ?? MAX_WAIT_MS / 2));
    this.cancelWait ??= this.clock.after(() => this.write(), Math.max(1, wait));
  }

  private cancel(): void {
    this.cancelWait?.();
    this.cancelWait = null;
  }

  private write(): void {
    this.cancel();
    this.oldestTurn = null;
    this.oldestSignal = null;
    this.urgent = false;
    this.flush();
  }
}
