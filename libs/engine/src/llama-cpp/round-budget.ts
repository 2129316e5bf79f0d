/** The smallest prompt chunk a streaming round takes, and the step its budget is rounded down to. */
export const BUDGET_STEP = 32;

/** How long a round may take while replies stream: each running reply waits about this long for its next token. */
export const STREAMING_ROUND_MS = 100;

/**
 * How many tokens one round may decode, as vLLM's `max_num_batched_tokens` bounds a step. When no reply
 * streams, the whole batch the context takes, so a prompt goes in in large chunks (fastest per token).
 * While replies stream, as many as decode in `STREAMING_ROUND_MS` at the speed the last rounds showed, so a
 * prompt arriving holds each stream up about that long per round, on any machine and under any load:
 * one fixed chunk size is too long on a slow CPU and needlessly short on a GPU.
 */
export class RoundBudget {
  /** Milliseconds per token of the rounds that carried a prompt chunk; null until one has. */
  private msPerToken: number | null = null;

  constructor(
    /** The context's batch: no round is larger. */
    private readonly most: number,
    private readonly streamingMs = STREAMING_ROUND_MS,
  ) {}

  /** The budget of the next round. */
  tokens(streaming: boolean): number {
    if (!streaming) return this.most;
    // Before any chunk was measured: a small chunk, so the first round with a stream running stays short.
    const fit = this.msPerToken === null ? 4 * BUDGET_STEP : this.streamingMs / this.msPerToken;
    return Math.min(this.most, Math.max(BUDGET_STEP, Math.floor(fit / BUDGET_STEP) * BUDGET_STEP));
  }

  /**
   * A round of `tokens` took `ms` to decode. Only rounds with a chunk in them count: a decode of a few
   * tokens costs about as much as reading the weights once, and says nothing of what a chunk costs per token.
   */
  measured(tokens: number, ms: number): void {
    if (tokens < BUDGET_STEP || !(ms > 0)) return;
    const perToken = ms / tokens;
    this.msPerToken = this.msPerToken === null ? perToken : 0.6 * this.msPerToken + 0.4 * perToken;
  }
}
