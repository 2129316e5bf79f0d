import type { ReplyEvent } from '@conveyor/queue';
import type { PlatformMetrics } from './platform-metrics.service.js';

/** Turns one reply's events into queue-wait, first-token and throughput observations. */
export class ReplyTiming {
  private startedAt: number | null = null;
  private firstTextAt: number | null = null;

  constructor(
    private readonly metrics: PlatformMetrics,
    private readonly deployment: string,
    private readonly enqueuedAt: number,
    // A resumed stream's reply was timed by the replica that accepted it.
    private readonly record: boolean,
  ) {}

  observe(event: ReplyEvent): void {
    if (!this.record) return;
    const now = Date.now();
    const labels = { deployment: this.deployment };
    if (event.type === 'start' && this.startedAt === null) {
      this.startedAt = now;
      this.metrics.queueWait.observe(labels, (now - this.enqueuedAt) / 1000);
    } else if (event.type === 'delta' && this.firstTextAt === null) {
      this.firstTextAt = now;
      this.metrics.timeToFirstToken.observe(labels, (now - this.enqueuedAt) / 1000);
    } else if (event.type === 'end') {
      this.metrics.tokens.inc(labels, event.usage.completionTokens);
      this.metrics.countPrompt(this.deployment, event.usage);
      const seconds = (now - (this.startedAt ?? now)) / 1000;
      if (seconds > 0) this.metrics.tokensPerSecond.observe(labels, event.usage.completionTokens / seconds);
    }
  }
}
