import type { LlamaContextSequence, LlamaModel, SequenceEvaluateOptions, Token } from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import type { Stepper } from './lockstep-scheduler.js';
import { PENALTY_WINDOW } from './llama-options.js';
import { StopMatcher } from './stop-matcher.js';
import { TokenText } from './token-text.js';

export interface GenerationPlan {
  prompt: Token[];
  /** The most tokens to generate. */
  budget: number;
  /** Stop strings: the request's and the chat template's textual end markers. */
  stops: string[];
  /** Tokens that end the reply besides the model's end-of-generation tokens (the template's end-of-turn). */
  endTokens: ReadonlySet<Token>;
  /** The sampler's options; repetition penalties look at `recent`, the tokens this generation keeps track of. */
  evaluate(recent: () => Token[]): SequenceEvaluateOptions;
  signal?: AbortSignal;
  onText(text: string): void;
}

export interface GenerationOutcome {
  finishReason: FinishReason;
  /** Tokens the model produced, counting an end-of-generation token it sampled. */
  generatedTokens: number;
  aborted: boolean;
}

/**
 * One reply generated on one context sequence, a token per step: sampling runs
 * in llama.cpp, while stop strings, end tokens, the token budget and text
 * decoding are handled here, where each step costs a few microseconds of JS.
 */
export class LlamaGeneration implements Stepper {
  readonly outcome: Promise<GenerationOutcome>;
  readonly order: number;
  private readonly iterator: AsyncGenerator<Token, void, Token | Token[] | undefined>;
  private readonly text: TokenText<Token>;
  private readonly stopMatcher: StopMatcher;
  private readonly recent: Token[];
  private generated = 0;
  private settle!: (outcome: GenerationOutcome) => void;
  private reject!: (err: unknown) => void;

  constructor(
    model: LlamaModel,
    sequence: LlamaContextSequence,
    private readonly plan: GenerationPlan,
  ) {
    this.outcome = new Promise((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.order = sequenceOrder(sequence);
    this.recent = plan.prompt.slice(-PENALTY_WINDOW);
    this.text = new TokenText((tokens, lastTokens) => model.detokenize(tokens, false, lastTokens));
    this.stopMatcher = new StopMatcher(plan.stops);
    this.iterator = sequence.evaluate(plan.prompt, plan.evaluate(() => this.recent.slice(-PENALTY_WINDOW)));
  }

  async step(): Promise<boolean> {
    try {
      if (this.plan.signal?.aborted) return await this.finish('stop', true);
      const next = await this.iterator.next();
      this.generated++;
      // The iterator ends when the model samples an end-of-generation token.
      if (next.done) return await this.finish('stop');
      const token = next.value;
      if (this.plan.endTokens.has(token)) return await this.finish('stop');
      this.remember(token);
      const piece = this.stopMatcher.push(this.text.push(token));
      if (piece.text) this.plan.onText(piece.text);
      if (piece.stopped) return await this.finish('stop', false, true);
      if (this.generated >= this.plan.budget) return await this.finish('length');
      return true;
    } catch (err) {
      await this.iterator.return().catch(() => undefined);
      this.reject(err);
      return false;
    }
  }

  private remember(token: Token): void {
    this.recent.push(token);
    if (this.recent.length > 2 * PENALTY_WINDOW) this.recent.splice(0, this.recent.length - PENALTY_WINDOW);
  }

  private async finish(reason: FinishReason, aborted = false, stopMatched = false): Promise<false> {
    let finishReason = reason;
    if (!aborted && !stopMatched) {
      // Text still held (an unfinished character, a possible stop string's start) belongs to the reply.
      const last = this.stopMatcher.push(this.text.flush());
      const tail = last.stopped ? last.text : last.text + this.stopMatcher.flush();
      if (last.stopped) finishReason = 'stop';
      if (tail) this.plan.onText(tail);
    }
    // Ends the evaluation and frees its sampler before the sequence goes back to the context.
    await this.iterator.return();
    this.settle({ finishReason, generatedTokens: this.generated, aborted });
    return false;
  }
}

/**
 * The sequence's id in its context, which orders the batch. node-llama-cpp keeps it private; it is
 * pinned, and a version without it only loses speed (every sequence sorts the same), never output.
 */
function sequenceOrder(sequence: LlamaContextSequence): number {
  const id = (sequence as unknown as { _sequenceId?: unknown })._sequenceId;
  return typeof id === 'number' ? id : 0;
}
