import type { FinishReason, TokenLogprob } from '@conveyor/queue';
import type { OutputPiece } from '../core/generation-engine.js';
import { StopMatcher } from '../core/stop-matcher.js';
import type { RoundParticipant } from './simulated-rounds.js';
import type { SimulatedText } from './simulated-text.js';

/** One choice's reply as planned: where its text starts, how long it runs, and what ends it early. */
export interface SimulatedReplyPlan {
  firstDueAt: number;
  text: SimulatedText;
  /** Tokens an earlier attempt already sent: the text goes on from there, and they count as generated. */
  sent: number;
  /** Tokens it may still generate: max_tokens less what was sent, and what the context has room for. */
  budget: number;
  /** Tokens after which the "model" ends the reply by itself (`stop`), unless the budget ends it first. */
  natural: number;
  stops: readonly string[];
  /** Alternatives per token's log-probability; undefined: none asked for. */
  logprobs?: number;
  emit(piece: Omit<OutputPiece, 'choice'>): void;
}

export interface SimulatedOutcome {
  finishReason: FinishReason;
  /** The stop string that ended the reply. */
  stopString?: string;
  generatedTokens: number;
  aborted: boolean;
}

/** A choice of a simulated request: a token a round, the configured text, cut by stop strings and its budget. */
export class SimulatedReply implements RoundParticipant {
  readonly firstDueAt: number;
  readonly outcome: Promise<SimulatedOutcome>;
  private generated = 0;
  private readonly stops: StopMatcher;
  private settle!: (outcome: SimulatedOutcome) => void;
  private over = false;

  constructor(private readonly plan: SimulatedReplyPlan) {
    this.firstDueAt = plan.firstDueAt;
    this.stops = new StopMatcher(plan.stops);
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  /** Ends the reply before it is done (its signal fired, or the engine is disposed). */
  abort(): void {
    this.finish('stop', true);
  }

  step(): boolean {
    if (this.over) return true;
    if (this.plan.budget <= 0) return this.finish('length');
    if (this.plan.natural <= 0) return this.finish('stop');
    const index = this.plan.sent + this.generated;
    const token = this.plan.text.token(index);
    this.generated++;
    const piece = this.stops.push(token);
    this.emit(piece.text, this.logprob(token));
    if (piece.stopped) return this.finish('stop', false, piece.matched);
    if (this.generated >= this.plan.natural) return this.finish('stop');
    if (this.generated >= this.plan.budget) return this.finish('length');
    return false;
  }

  private finish(reason: FinishReason, aborted = false, stopString?: string): true {
    if (this.over) return true;
    this.over = true;
    // Text held as the possible start of a stop string was none after all: it belongs to the reply.
    if (!aborted) this.emit(this.stops.flush());
    this.settle({
      finishReason: reason,
      ...(stopString !== undefined ? { stopString } : {}),
      generatedTokens: this.generated,
      aborted,
    });
    return true;
  }

  private emit(text: string, logprob?: TokenLogprob): void {
    if (!text && !logprob) return;
    this.plan.emit({ text, ...(logprob ? { logprobs: [logprob] } : {}), tokens: this.plan.sent + this.generated });
  }

  /** Every simulated token is certain: log-probability 0, the only alternative itself. */
  private logprob(token: string): TokenLogprob | undefined {
    if (this.plan.logprobs === undefined) return undefined;
    const entry = { token, logprob: 0, bytes: [...Buffer.from(token, 'utf8')] };
    return { ...entry, top: this.plan.logprobs > 0 ? [entry] : [] };
  }
}
