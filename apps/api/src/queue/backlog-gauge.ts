/**
 * Each deployment's interactive backlog, as the queue-depth limit needs it,
 * without a Redis round trip per request. A reading stays good for `maxAgeMs`,
 * counting the requests admitted since, which only over-estimates (workers take
 * jobs meanwhile). Whenever that estimate comes near the limit, the backlog is
 * read afresh, so a refusal is always based on a fresh reading. Admissions by
 * other API replicas within `maxAgeMs` are the only thing it can miss.
 */
export class BacklogGauge {
  private readonly readings = new Map<string, { waiting: number; at: number }>();

  constructor(
    private readonly read: (deployment: string) => Promise<number>,
    private readonly maxAgeMs = 100,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one more request under `limit`; when refused, returns the backlog that was read. */
  async admit(deployment: string, limit: number): Promise<{ admitted: true } | { admitted: false; waiting: number }> {
    const known = this.readings.get(deployment);
    if (known && this.now() - known.at < this.maxAgeMs && known.waiting + 1 < limit) {
      known.waiting++;
      return { admitted: true };
    }
    const at = this.now();
    const waiting = await this.read(deployment);
    if (waiting >= limit) {
      this.readings.delete(deployment);
      return { admitted: false, waiting };
    }
    this.readings.set(deployment, { waiting: waiting + 1, at });
    return { admitted: true };
  }
}
