/**
 * Values read from elsewhere, kept for a short time: a hit costs nothing, and a value asked for by many
 * requests at once is read once (the cache holds the read's promise). A failed read is not kept. Bounded:
 * past `max` entries the oldest goes, so keys nobody has (a flood of wrong ones) cannot grow it.
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, { until: number; value: Promise<V> }>();

  constructor(
    private readonly freshMs: number,
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value of `key`: the kept one while fresh, else what `read` gives (it is told when the read began). */
  get(key: string, read: (since: number) => Promise<V>): Promise<V> {
    const now = this.now();
    const kept = this.entries.get(key);
    if (kept && kept.until > now) return kept.value;
    const value = read(now);
    this.put(key, value, now);
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  /** Keeps `value` for `key` as read at `since`: fresh until `since` plus the cache's time. */
  put(key: string, value: Promise<V>, since: number = this.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { until: since + this.freshMs, value });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
