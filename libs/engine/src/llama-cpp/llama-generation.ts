import {
  LlamaGrammarEvaluationState,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
  type TokenBias,
} from 'node-llama-cpp';
import type { FinishReason, TokenLogprob } from '@conveyor/queue';
import type { OutputPiece } from '../core/generation-engine.js';
import type { Stepper } from './lockstep-scheduler.js';
import { PENALTY_WINDOW, type SamplingOptions } from './llama-options.js';
import type { NativeBatcher } from './native-batcher.js';
import {
  nativeSampler,
  probabilityMap,
  samplerConfig,
  type NativeContext,
  type NativeSampler,
} from './native-context.js';
import type { ReasoningSplitter } from '../core/reasoning-splitter.js';
import { StopMatcher } from '../core/stop-matcher.js';
import { TokenText } from '../core/token-text.js';

/** How a tool call is produced: the model's own call syntax, with the arguments held to their schema by grammar. */
export interface ToolCallPlan {
  /** Auto: text the model writes to start a call. Empty when the prompt already opens the call (a forced call). */
  triggers: string[];
  /** The one function the call must name (a named tool_choice, or the only tool): its name is written for the model. */
  forcedName?: string;
  /** Chooses among the tools' names when the model must pick one. */
  nameGrammar?: LlamaGrammar;
  /** What the syntax puts between a function's name and its arguments. */
  paramsPrefix: Token[];
  /** A grammar of the function's arguments whose longest output fits `budget` tokens; null when none fits. */
  argsGrammar(name: string, budget: number): Promise<LlamaGrammar | null>;
  callId: string;
}

export type ReplyShape =
  { kind: 'text' } | { kind: 'json'; grammar: LlamaGrammar } | { kind: 'tool'; call: ToolCallPlan };

export interface GenerationPlan {
  prompt: Token[];
  /** Tokens at the start of `prompt` already in the sequence's cells (a reused prefix): evaluation starts after them. */
  reused: number;
  /** Told how many tokens of the sequence are in its cells after each batch (other requests may share them). */
  progressed?(position: number): void;
  /** The most tokens to generate. */
  budget: number;
  /** Stop strings: the request's and the chat template's textual end markers. */
  stops: string[];
  /** Tokens that end the reply besides the model's end-of-generation tokens (the template's end-of-turn). */
  endTokens: ReadonlySet<Token>;
  /** The sampler's options; repetition penalties look at `recent`, the tokens this generation keeps track of. */
  evaluate(recent: () => Token[]): SamplingOptions;
  /** `free`: the request's logit_bias; `noEnd`: the same, with every token that ends the reply banned; `none`: empty. */
  bias: { free: TokenBias; noEnd?: TokenBias; none: TokenBias };
  /** Tokens before the reply may end (min_tokens; Infinity for ignore_eos). */
  minTokens: number;
  /** Alternatives per token when log-probabilities are reported. */
  logprobs?: number;
  shape: ReplyShape;
  reasoning?: ReasoningSplitter;
  signal?: AbortSignal;
  emit(piece: Omit<OutputPiece, 'choice'>): void;
}

export interface GenerationOutcome {
  /** The tokens in the sequence's cells when the reply ended (prompt and reply as evaluated); null when unknown. */
  cached: Token[] | null;
  finishReason: FinishReason;
  /** Tokens the model produced, counting an end-of-generation token it sampled. */
  generatedTokens: number;
  aborted: boolean;
}

type Phase = { kind: 'text' } | { kind: 'json' } | { kind: 'name'; text: string } | { kind: 'args'; name: string };
type Step = { token: Token; probabilities?: Map<Token, number> };

/** Where a generation's tokens are decoded and sampled: its context's batcher and native layer. */
export interface GenerationRuntime {
  batcher: NativeBatcher;
  native: NativeContext;
}

/**
 * One reply generated on one context sequence, a token per step: sampling runs
 * in llama.cpp, while stop strings, end tokens, the token budget, text decoding
 * and the reply's shape (free text, JSON held to a grammar, a tool call) are
 * handled here, where each step costs a few microseconds of JS.
 */
export class LlamaGeneration implements Stepper {
  readonly outcome: Promise<GenerationOutcome>;
  readonly order: number;
  private readonly sampler: NativeSampler;
  private readonly options: SamplingOptions;
  /** Where the next evaluated token goes in the sequence. */
  private position = 0;
  /** What the next step evaluates: the prompt first, then each sampled token. */
  private next: Token[];
  /** The tokens in the sequence's cells, from position 0: what a later request may reuse. Null after a failed decode. */
  private evaluated: Token[] | null;
  private released = false;
  private readonly text: TokenText<Token>;
  private readonly stopMatcher: StopMatcher;
  private readonly triggerMatcher: StopMatcher | null;
  private readonly recent: Token[];
  private phase: Phase;
  private grammar: LlamaGrammarEvaluationState | undefined;
  /** Tokens to evaluate next instead of the one just sampled (text the reply's syntax dictates). */
  private input: Token[] | undefined;
  private opened = false;
  private generated = 0;
  private settle!: (outcome: GenerationOutcome) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly model: LlamaModel,
    sequenceId: number,
    private readonly plan: GenerationPlan,
    private readonly runtime: GenerationRuntime,
  ) {
    this.outcome = new Promise((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.order = sequenceId;
    this.position = plan.reused;
    this.next = plan.prompt.slice(plan.reused);
    this.evaluated = plan.prompt.slice(0, plan.reused);
    this.recent = plan.prompt.slice(-PENALTY_WINDOW);
    this.text = new TokenText((tokens, lastTokens) => model.detokenize(tokens, false, lastTokens));
    this.stopMatcher = new StopMatcher(plan.stops);
    const shape = plan.shape;
    this.triggerMatcher =
      shape.kind === 'tool' && shape.call.triggers.length ? new StopMatcher(shape.call.triggers) : null;
    this.phase =
      shape.kind === 'json'
        ? { kind: 'json' }
        : shape.kind === 'tool' && !this.triggerMatcher
          ? this.callPhase(shape.call)
          : { kind: 'text' };
    if (shape.kind === 'json') this.grammar = new LlamaGrammarEvaluationState({ model, grammar: shape.grammar });
    this.options = plan.evaluate(() => this.recent.slice(-PENALTY_WINDOW));
    this.sampler = nativeSampler(model);
  }

  /**
   * Evaluates the next tokens and samples one. The sampler is configured for each token: the grammar
   * and the bias change as the reply goes on, and the native side only rebuilds what changed.
   */
  private evaluateNext(tokens: Token[]): Promise<Step> {
    const position = this.position;
    this.position += tokens.length;
    const probabilities = this.plan.logprobs !== undefined;
    return this.runtime.batcher.evaluate({
      sequenceId: this.order,
      position,
      tokens,
      progressed: this.plan.progressed,
      sample: async (logitIndex) => {
        // Decoded: these tokens are in the cells now, whatever the sample does.
        this.evaluated?.push(...tokens);
        this.sampler.applyConfig(samplerConfig(this.options, this.grammar, this.currentBias()));
        const sampled = await this.runtime.native.sampleToken(logitIndex, this.sampler, probabilities, false);
        if (!Array.isArray(sampled)) return { token: sampled as Token };
        return { token: sampled[0] as Token, probabilities: probabilityMap(sampled[1]) };
      },
    });
  }

  async step(): Promise<boolean> {
    try {
      if (!this.opened && !(await this.open())) return false;
      if (this.plan.signal?.aborted) return await this.finish('stop', true);
      const input = this.input ?? this.next;
      this.input = undefined;
      const { token, probabilities } = await this.evaluateNext(input);
      // Nothing could be sampled (a grammar that allows nothing more): the reply ends here.
      if (token == null) return await this.finish('stop');
      if (token === -1) throw new Error('Failed to sample the next token.');
      this.next = [token];
      this.generated++;
      const ends = this.model.isEogToken(token) || (!this.grammar && this.plan.endTokens.has(token));
      switch (this.phase.kind) {
        case 'text':
          return await this.onText(token, ends, probabilities);
        case 'json':
          if (ends) return await this.finish('stop');
          this.emitText(this.text.push(token), this.logprob(token, probabilities));
          return this.generated < this.plan.budget || (await this.finish('length'));
        case 'name':
          return await this.onName(token, ends);
        case 'args':
          if (ends) return await this.finish('tool_calls');
          this.emitArguments(this.text.push(token));
          return this.generated < this.plan.budget || (await this.finish('length'));
      }
    } catch (err) {
      // A failed decode may have left some of its tokens in the cells: none of them is known to be there.
      this.evaluated = null;
      this.release();
      this.reject(err);
      return false;
    }
  }

  /** A forced call starts held to its grammar: the name's, or the arguments' when the name is known. */
  private async open(): Promise<boolean> {
    this.opened = true;
    if (this.plan.shape.kind !== 'tool') return true;
    const call = this.plan.shape.call;
    if (this.phase.kind === 'args') return this.enterArguments(call, this.phase.name, this.plan.budget);
    if (this.phase.kind === 'name')
      this.grammar = new LlamaGrammarEvaluationState({ model: this.model, grammar: call.nameGrammar as LlamaGrammar });
    return true;
  }

  private async onText(token: Token, ends: boolean, probabilities: Map<Token, number> | undefined): Promise<boolean> {
    if (ends) return this.finish('stop');
    this.remember(token);
    let text = this.text.push(token);
    const logprob = this.logprob(token, probabilities);
    if (this.triggerMatcher && this.plan.shape.kind === 'tool') {
      const trigger = this.triggerMatcher.push(text);
      text = trigger.text;
      if (trigger.stopped) {
        const piece = this.stopMatcher.push(text);
        this.emitText(piece.text + (piece.stopped ? '' : this.stopMatcher.flush()), logprob);
        if (piece.stopped) return this.finish('stop', false, true);
        return this.startCall(this.plan.shape.call, token);
      }
    }
    const piece = this.stopMatcher.push(text);
    this.emitText(piece.text, logprob);
    if (piece.stopped) return this.finish('stop', false, true);
    if (this.generated >= this.plan.budget) return this.finish('length');
    return true;
  }

  /** The model wrote a call's opening: the rest of the call is held to its syntax and schema. */
  private async startCall(call: ToolCallPlan, last: Token): Promise<boolean> {
    this.flushText();
    const phase = this.callPhase(call);
    this.phase = phase;
    if (phase.kind !== 'args') {
      this.grammar = new LlamaGrammarEvaluationState({ model: this.model, grammar: call.nameGrammar as LlamaGrammar });
      return true;
    }
    const written = this.model.tokenize(phase.name, false);
    this.input = [last, ...written, ...call.paramsPrefix];
    return this.enterArguments(call, phase.name, this.plan.budget - this.generated);
  }

  private callPhase(call: ToolCallPlan): Extract<Phase, { kind: 'name' | 'args' }> {
    return call.forcedName ? { kind: 'args', name: call.forcedName } : { kind: 'name', text: '' };
  }

  private async onName(token: Token, ends: boolean): Promise<boolean> {
    if (this.phase.kind !== 'name' || this.plan.shape.kind !== 'tool') return false;
    if (!ends) {
      this.phase.text += this.text.push(token);
      return this.generated < this.plan.budget || this.finish('length');
    }
    const name = this.phase.text + this.text.flush();
    const call = this.plan.shape.call;
    // The end token that closed the name's grammar is replaced by what separates name and arguments.
    this.input = call.paramsPrefix.length ? [...call.paramsPrefix] : [];
    this.phase = { kind: 'args', name };
    return this.enterArguments(call, name, this.plan.budget - this.generated);
  }

  private async enterArguments(call: ToolCallPlan, name: string, budget: number): Promise<boolean> {
    const grammar = await call.argsGrammar(name, budget);
    if (!grammar) return this.finish('length');
    this.grammar = new LlamaGrammarEvaluationState({ model: this.model, grammar });
    this.emit({ toolCall: { index: 0, id: call.callId, name, arguments: '' } });
    // With nothing to evaluate first, the sampled token stands: only the end token of a name is dropped.
    if (this.input && !this.input.length) this.input = undefined;
    return true;
  }

  private currentBias(): TokenBias {
    // A grammar decides what may come next; a bias could leave it nothing to choose.
    if (this.grammar) return this.plan.bias.none;
    return (this.generated < this.plan.minTokens ? this.plan.bias.noEnd : undefined) ?? this.plan.bias.free;
  }

  private logprob(token: Token, probabilities: Map<Token, number> | undefined): TokenLogprob | undefined {
    if (!probabilities) return undefined;
    const entry = (t: Token, p: number) => {
      const text = this.model.detokenize([t], true);
      return { token: text, logprob: p > 0 ? Math.log(p) : -9999, bytes: [...Buffer.from(text, 'utf8')] };
    };
    const top: TokenLogprob['top'] = [];
    for (const [t, p] of probabilities) {
      if (top.length >= (this.plan.logprobs ?? 0)) break;
      top.push(entry(t, p));
    }
    return { ...entry(token, probabilities.get(token) ?? 0), top };
  }

  private emitText(text: string, logprob?: TokenLogprob): void {
    const logprobs = logprob ? [logprob] : undefined;
    if (!text && !logprobs) return;
    if (!this.plan.reasoning || this.phase.kind === 'json') {
      this.emit({ text, logprobs });
      return;
    }
    const split = this.plan.reasoning.push(text);
    if (split.reasoning || split.content || logprobs)
      this.emit({ reasoning: split.reasoning || undefined, text: split.content, logprobs });
  }

  /** Every piece carries the tokens generated so far, so whoever resumes the reply knows what it cost. */
  private emit(piece: Omit<OutputPiece, 'choice' | 'tokens'>): void {
    this.plan.emit({ ...piece, tokens: this.generated });
  }

  private emitArguments(text: string): void {
    if (text) this.emit({ toolCall: { index: 0, arguments: text } });
  }

  /**
   * Text still held (a possible call opening, an unfinished character, a possible stop string's start)
   * belongs to the reply; true when it completed a stop string after all.
   */
  private flushText(): boolean {
    const held = (this.triggerMatcher?.flush() ?? '') + this.text.flush();
    const last = this.stopMatcher.push(held);
    this.emitText(last.stopped ? last.text : last.text + this.stopMatcher.flush());
    this.flushReasoning();
    return last.stopped;
  }

  private flushReasoning(): void {
    const rest = this.plan.reasoning?.flush();
    if (rest && (rest.reasoning || rest.content))
      this.emit({ reasoning: rest.reasoning || undefined, text: rest.content });
  }

  private remember(token: Token): void {
    this.recent.push(token);
    if (this.recent.length > 2 * PENALTY_WINDOW) this.recent.splice(0, this.recent.length - PENALTY_WINDOW);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.sampler.dispose();
  }

  private async finish(reason: FinishReason, aborted = false, stopMatched = false): Promise<false> {
    let finishReason = reason;
    if (!aborted && !stopMatched) {
      if (this.phase.kind === 'text') {
        if (this.flushText()) finishReason = 'stop';
      } else if (this.phase.kind === 'json') this.emitText(this.text.flush());
      else if (this.phase.kind === 'args') this.emitArguments(this.text.flush());
    } else if (stopMatched) this.flushReasoning();
    // Frees the sampler before the sequence goes back to the context.
    this.release();
    this.settle({ finishReason, generatedTokens: this.generated, aborted, cached: this.evaluated });
    return false;
  }
}
