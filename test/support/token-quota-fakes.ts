/** The token quota's counters in memory, for unit tests of what reserves and settles them. */
import {
  TokenQuotas,
  type TokenLimits,
  type TokenReservation,
} from '../../apps/api/src/repositories/token-quotas.port.js';

/**
 * One window per kind (tests do not cross a minute), the holds by request, and each settle as it was
 * asked for: enough to see what was reserved, refunded and charged.
 */
export class InMemoryTokenQuotas extends TokenQuotas {
  readonly used = { minute: 0, day: 0 };
  readonly holds = new Map<string, number>();
  readonly settled: { requestId: string; used: number }[] = [];
  readonly batches = new Map<string, { tokens: number; lines: number }>();

  async reserve(_key: string, requestId: string, tokens: number, limits: TokenLimits): Promise<TokenReservation> {
    const used = { ...this.used };
    if (limits.perMinute && used.minute + tokens > limits.perMinute) return { refusedBy: 'minute', used };
    if (limits.perDay && used.day + tokens > limits.perDay) return { refusedBy: 'day', used };
    this.add(tokens);
    this.holds.set(requestId, tokens);
    return { refusedBy: null, used: { ...this.used } };
  }

  async settle(_key: string, requestId: string, _reservedAt: number, used: number): Promise<boolean> {
    const held = this.holds.get(requestId);
    if (held === undefined) return false;
    this.holds.delete(requestId);
    this.add(used - held);
    this.settled.push({ requestId, used });
    return true;
  }

  async reserveBatch(
    _key: string,
    batchId: string,
    tokens: number,
    lines: number,
    perDay: number,
  ): Promise<{ reserved: boolean; dayUsed: number }> {
    if (this.batches.has(batchId)) return { reserved: true, dayUsed: this.used.day };
    if (this.used.day + tokens > perDay) return { reserved: false, dayUsed: this.used.day };
    this.used.day += tokens;
    this.batches.set(batchId, { tokens, lines });
    return { reserved: true, dayUsed: this.used.day };
  }

  async settleBatch(
    _key: string,
    batchId: string,
    _reservedAt: number,
    settled: { lines: number; used: number; ended: boolean },
  ): Promise<void> {
    const hold = this.batches.get(batchId) ?? { tokens: 0, lines: 0 };
    const all = settled.ended || settled.lines >= hold.lines;
    const release = all ? hold.tokens : Math.floor((hold.tokens * settled.lines) / hold.lines);
    if (all) this.batches.delete(batchId);
    else this.batches.set(batchId, { tokens: hold.tokens - release, lines: hold.lines - settled.lines });
    this.used.day += settled.used - release;
  }

  private add(tokens: number): void {
    this.used.minute += tokens;
    this.used.day += tokens;
  }
}
