/** The step a round's budget is rounded down to. */
export const BUDGET_STEP = 32;

/**
 * The smallest budget. On a CPU a token costs several times more in a batch of 32 than in one of 128 (the
 * matrix kernels work best on larger batches), so a budget allowed to fall lower, on a machine slowed by
 * other work, makes rounds dearer per token, its measure slower, the next budget smaller still, and the
 * prompt goes in at a fraction of its speed.
 */
export const BUDGET_FLOOR = 4 * BUDGET_STEP;

/** How long a round may take while replies stream: each running reply waits about this long for its next token. */
export const STREAMING_ROUND_MS = 100;

/**
 * How long any round may take: a request that arrives while a prompt is taken in alone waits for the round
 * under way before its own prompt joins, so this bounds a short request's wait behind a long prompt (the
 * agent bench's goal: its first token within 0.5 s). On the benches' CPU a 512-token round at a few thousand
 * tokens of context took 400-600 ms, and a prompt alone went in no slower in rounds of this length
 * (bench/agent.bench.mjs, first turns); on a GPU a whole batch fits.
 */
export const ROUND_MS = 200;

/** The figures a budget is made from. */
export interface RoundBudgetOptions {
  /** The longest round while replies stream (default STREAMING_ROUND_MS). */
  streamingMs?: number;
  /** The longest round otherwise (default ROUND_MS). */
  roundMs?: number;
}

/**
 * How many tokens one round may decode, as vLLM's `max_num_batched_tokens` bounds a step, from how long
 * rounds take on this machine. A decode costs a fixed part (the graph, a pass over the weights, the
 * sampling), paid once per round however few tokens it holds, and a part per token. Both are learnt from
 * the rounds themselves: rounds of a few tokens (the streams' next tokens) show the fixed part, rounds
 * with a prompt chunk the part per token beyond it. Dividing a whole round's time by its tokens instead
 * makes a short round look dear per token, shrinks the next one, and starves prefill.
 *
 * While replies stream, a round holds what decodes in `streamingMs`, so a prompt arriving holds each stream
 * up about that long per round; otherwise what decodes in `roundMs`, so a request arriving behind a long
 * prompt starts within a round of that length. Never more than the context's batch, so on a fast machine
 * (a GPU) every round is the whole batch. One fixed chunk size is too long on a slow CPU and needlessly
 * short on a GPU.
 */
export class RoundBudget {
  /** Milliseconds of a round however many tokens it holds; null until a round of a few tokens was seen. */
  private fixedMs: number | null = null;
  /** Milliseconds per token beyond the fixed part, from the rounds that carried a prompt chunk; null until one has. */
  private msPerToken: number | null = null;
  private readonly streamingMs: number;
  private readonly roundMs: number;

  constructor(
    /** The context's batch: no round is larger. */
    private readonly most: number,
    options: RoundBudgetOptions = {},
  ) {
    this.streamingMs = options.streamingMs ?? STREAMING_ROUND_MS;
    this.roundMs = options.roundMs ?? ROUND_MS;
  }

  /** The budget of the next round: a short one while replies stream. */
  tokens(streaming: boolean): number {
    const ms = streaming ? this.streamingMs : this.roundMs;
    // Before any chunk was measured: a small chunk while streaming, so the first such round stays short,
    // and the whole batch otherwise, which measures the speed at once.
    if (this.msPerToken === null) return streaming ? Math.min(this.most, BUDGET_FLOOR) : this.most;
    const fit = Math.max(0, ms - (this.fixedMs ?? 0)) / this.msPerToken;
    return Math.min(this.most, Math.max(BUDGET_FLOOR, Math.floor(fit / BUDGET_STEP) * BUDGET_STEP));
  }

  /**
   * A round of `tokens` took `ms` to decode. A round of fewer than a step's tokens measures the fixed part;
   * a larger one the part per token, net of the fixed part known so far.
   */
  measured(tokens: number, ms: number): void {
    if (!(ms > 0) || tokens <= 0) return;
    if (tokens < BUDGET_STEP) {
      this.fixedMs = this.fixedMs === null ? ms : 0.8 * this.fixedMs + 0.2 * ms;
      return;
    }
    // The fixed part is at most most of a round: a round measured before any decode of a few tokens, or on
    // a machine that slowed down meanwhile, still leaves a part per token.
    const fixed = Math.min(this.fixedMs ?? 0, 0.5 * ms);
    const perToken = (ms - fixed) / tokens;
    this.msPerToken = this.msPerToken === null ? perToken : 0.6 * this.msPerToken + 0.4 * perToken;
  }
}
