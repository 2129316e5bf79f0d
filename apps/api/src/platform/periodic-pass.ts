/**
 * A pass a replica runs on a timer (a sweep, a roll-up, a batch tick), never two at once: when the next is
 * due while one still runs, it is skipped, so a slow Redis or file store never piles passes up. A pass that
 * fails is handed to `failed` and the timer goes on. `stop` ends the timer and waits for the pass under
 * way, so a shutdown never cuts one in half. The timer alone never keeps the process alive.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly failed: (err: Error) => void,
  ) {}

  /** Runs the pass every `everyMs`, the first time `everyMs` from now. */
  start(everyMs: number): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.pass()
        .then(() => undefined)
        .catch((err: unknown) => this.failed(err instanceof Error ? err : new Error(String(err))))
        .finally(() => (this.running = null));
    }, everyMs);
    this.timer.unref();
  }

  /** No pass starts after this; resolves once the one under way, if any, has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
