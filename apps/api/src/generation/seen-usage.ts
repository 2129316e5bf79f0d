import type { ReplyEvent, TokenUsage } from '@conveyor/queue';

/**
 * The tokens a reply is known to have used from its events so far: its prompt's (from its start) and
 * each choice's output. What a reply that ended without its usage (an error, the client gone, a
 * deadline) is charged for against its key's token quota.
 */
export class SeenUsage {
  private prompt = 0;
  private readonly output = new Map<number, number>();

  observe(event: ReplyEvent): void {
    if (event.type === 'start') {
      // Each attempt evaluates the prompt again.
      this.prompt += event.promptTokens;
    } else if (event.type === 'delta' && event.tokens !== undefined) {
      const choice = event.choice ?? 0;
      this.output.set(choice, Math.max(this.output.get(choice) ?? 0, event.tokens));
    }
  }

  /** The reply's usage when its end said it, else what its events showed. */
  total(usage: TokenUsage | undefined): number {
    if (usage) return usage.promptTokens + usage.completionTokens;
    let output = 0;
    for (const tokens of this.output.values()) output += tokens;
    return this.prompt + output;
  }
}
