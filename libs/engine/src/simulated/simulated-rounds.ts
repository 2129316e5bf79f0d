/** A reply the rounds drive: each round it may produce one token; it says when it has finished. */
export interface RoundParticipant {
  /** When its first token is due (ms, Date.now() time). */
  readonly firstDueAt: number;
  /** Produces its next token; returns true when the reply is over. */
  step(): boolean;
}

/**
 * The simulated engine's lock-step decoding: one timer for every running reply, firing each `tpotMs`,
 * and in each firing (one event-loop turn) every reply whose first token is due produces one token, as
 * a real engine's decode carries one token of each reply. The worker's reply outbox writes per round,
 * so a simulated worker costs Redis what a real one would at the same pace.
 *
 * An idle engine's first reply gets its first token exactly `ttftMs` after it arrived; a reply that
 * arrives while others run gets it at the first round at or after that (at most one `tpotMs` later),
 * as a prompt joins a real engine's running batch. A late round does not catch up: a saturated CPU
 * slows the tokens down, as it would a real engine.
 */
export class SimulatedRounds {
  private readonly running = new Set<RoundParticipant>();
  private timer: NodeJS.Timeout | null = null;
  private nextAt = 0;

  constructor(private readonly tpotMs: number) {}

  add(reply: RoundParticipant): void {
    this.running.add(reply);
    // Rounds keep their pace while a reply is generating; with none yet, the next round is the first token due.
    if (this.timer === null || (!this.generating(Date.now()) && reply.firstDueAt < this.nextAt))
      this.schedule(reply.firstDueAt);
  }

  remove(reply: RoundParticipant): void {
    this.running.delete(reply);
    if (this.running.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(at: number): void {
    this.stop();
    this.nextAt = at;
    this.timer = setTimeout(() => this.round(), Math.max(0, at - Date.now()));
  }

  private round(): void {
    this.timer = null;
    const now = Date.now();
    for (const reply of [...this.running]) {
      if (reply.firstDueAt > now) continue;
      if (reply.step()) this.running.delete(reply);
    }
    if (this.running.size === 0) return;
    if (this.generating(now)) this.schedule(Math.max(this.nextAt + this.tpotMs, now));
    else this.schedule(Math.min(...[...this.running].map((r) => r.firstDueAt)));
  }

  /** Whether some reply has had its first token by `now`, so rounds go on at their pace. */
  private generating(now: number): boolean {
    for (const reply of this.running) if (reply.firstDueAt <= now) return true;
    return false;
  }
}
