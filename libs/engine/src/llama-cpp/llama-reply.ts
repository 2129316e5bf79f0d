import {
  LlamaGrammarEvaluationState,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
  type TokenBias,
} from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import { PENALTY_WINDOW, type SamplingOptions } from './llama-options.js';
import { nativeSampler, samplerConfig, type NativeSampler } from './native-context.js';
import type { ReplyOutcome, ReplyPlan, ToolCallPlan } from './reply-plan.js';
import { ReplyOutput } from './reply-output.js';
import type { LoopReply } from './round-loop.js';

/** `between`: a call has ended, and the model chooses between ending the reply and another call. */
type Phase =
  | { kind: 'text' }
  | { kind: 'json' }
  | { kind: 'name'; text: string }
  | { kind: 'args'; name: string }
  | { kind: 'between' };

/**
 * One reply on one context sequence, as the round loop drives it: the loop evaluates its input (the
 * prompt, then each sampled token) and samples in llama.cpp; stop strings, end tokens, the token budget,
 * and the reply's shape (free text, JSON held to a grammar, tool calls) are handled here, synchronously
 * in `accept`, where each token costs a few microseconds of JS.
 */
export class LlamaReply implements LoopReply {
  readonly outcome: Promise<ReplyOutcome>;
  readonly sequenceId: number;
  readonly probabilities: boolean;
  input: readonly Token[];
  fed = 0;
  position: number;
  ended = false;
  private readonly sampling: NativeSampler;
  private readonly options: SamplingOptions;
  /** The tokens in the sequence's cells, from position 0: what a later request may reuse. Null after a failure. */
  private evaluated: Token[] | null;
  private readonly out: ReplyOutput;
  private readonly recent: Token[];
  private phase: Phase;
  private grammar: LlamaGrammarEvaluationState | undefined;
  /** Tokens the next step evaluates instead of the one just sampled (text the reply's syntax dictates). */
  private dictated: Token[] | undefined;
  private generated = 0;
  private settle!: (outcome: ReplyOutcome) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly model: LlamaModel,
    sequenceId: number,
    private readonly plan: ReplyPlan,
  ) {
    this.outcome = new Promise((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.sequenceId = sequenceId;
    this.probabilities = plan.logprobs !== undefined;
    this.position = plan.reused;
    this.input = plan.prompt.slice(plan.reused);
    this.evaluated = plan.prompt.slice(0, plan.reused);
    this.recent = plan.prompt.slice(-PENALTY_WINDOW);
    this.out = new ReplyOutput(model, plan, () => this.generated);
    const shape = plan.shape;
    this.phase =
      shape.kind === 'json'
        ? { kind: 'json' }
        : shape.kind === 'tool' && !this.out.watchesForCall
          ? callPhase(shape.call)
          : { kind: 'text' };
    if (shape.kind === 'json') this.grammar = new LlamaGrammarEvaluationState({ model, grammar: shape.grammar });
    else if (shape.kind === 'tool' && this.phase.kind === 'text' && shape.call.textGrammar)
      this.grammar = new LlamaGrammarEvaluationState({ model, grammar: shape.call.textGrammar });
    this.options = plan.evaluate(() => this.recent.slice(-PENALTY_WINDOW));
    this.sampling = nativeSampler(model);
  }

  /**
   * Before the first step: a forced call starts held to its grammar, the name's, or the arguments' when
   * the name is known. False when the reply has already ended (no arguments fit its budget, or it failed).
   */
  async open(): Promise<boolean> {
    try {
      if (this.plan.shape.kind !== 'tool') return true;
      const call = this.plan.shape.call;
      if (this.phase.kind === 'args') return await this.enterArguments(call, this.phase.name, this.plan.budget);
      if (this.phase.kind === 'name') this.holdTo(call.nameGrammar as LlamaGrammar);
      return true;
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  proceed(): boolean {
    if (!this.plan.signal?.aborted) return true;
    this.finish('stop', true);
    return false;
  }

  decoded(count: number): void {
    const from = this.fed;
    this.fed += count;
    this.position += count;
    if (this.evaluated) for (let i = from; i < this.fed; i++) this.evaluated.push(this.input[i]!);
    this.plan.progressed?.(this.position);
  }

  /** The sampler is configured for each token: the grammar and the bias change as the reply goes on. */
  sampler(): NativeSampler {
    this.sampling.applyConfig(samplerConfig(this.options, this.grammar, this.currentBias()));
    return this.sampling;
  }

  accept(token: Token | null, probabilities: Map<Token, number> | undefined): void | Promise<void> {
    // Nothing could be sampled (a grammar that allows nothing more): the reply ends here.
    if (token == null) return void this.finish('stop');
    if (token === -1) throw new Error('Failed to sample the next token.');
    this.generated++;
    const ends = this.model.isEogToken(token) || (!this.grammar && this.plan.endTokens.has(token));
    const more = this.take(token, ends, probabilities);
    if (more === true) this.nextStep(token);
    else if (more !== false) return more.then((going) => (going ? this.nextStep(token) : undefined));
  }

  fail(err: unknown): void {
    if (this.ended) return;
    // A failed decode may have left some of its tokens in the cells: none of them is known to be there.
    this.evaluated = null;
    this.end();
    this.reject(err);
  }

  /** What the sampled token does to the reply; false once it has ended. */
  private take(token: Token, ends: boolean, probabilities: Map<Token, number> | undefined): boolean | Promise<boolean> {
    switch (this.phase.kind) {
      case 'text':
        return this.onText(token, ends, probabilities);
      case 'json':
        if (ends) return this.finish('stop');
        this.out.json(token, probabilities);
        return this.generated < this.plan.budget || this.finish('length');
      case 'name':
        return this.onName(this.phase, token, ends);
      case 'args':
        if (ends) return this.callEnded();
        this.out.arguments(this.out.tokenText(token));
        return this.generated < this.plan.budget || this.finish('length');
      case 'between':
        if (ends || this.plan.shape.kind !== 'tool') return this.finish('tool_calls');
        // The model began the next call's opening: its syntax is written for it, from the start.
        return this.openNextCall(this.plan.shape.call, []);
    }
  }

  /** The next step evaluates what the reply's syntax dictates, else the token just sampled. */
  private nextStep(token: Token): void {
    this.input = this.dictated ?? [token];
    this.dictated = undefined;
    this.fed = 0;
  }

  private onText(
    token: Token,
    ends: boolean,
    probabilities: Map<Token, number> | undefined,
  ): boolean | Promise<boolean> {
    if (ends) return this.finish('stop');
    this.remember(token);
    const turn = this.out.freeText(token, probabilities);
    if (turn === 'stop') return this.finish('stop', false, true);
    if (turn === 'call' && this.plan.shape.kind === 'tool') return this.startCall(this.plan.shape.call, token);
    if (this.generated >= this.plan.budget) return this.finish('length');
    return true;
  }

  /** The model wrote a call's opening: the rest of the call is held to its syntax and schema. */
  private startCall(call: ToolCallPlan, last: Token): boolean | Promise<boolean> {
    this.out.flushText();
    const phase = callPhase(call);
    this.phase = phase;
    if (phase.kind !== 'args') {
      this.holdTo(call.nameGrammar as LlamaGrammar);
      return true;
    }
    const written = this.model.tokenize(phase.name, false);
    this.dictated = [last, ...written, ...call.paramsPrefix];
    return this.enterArguments(call, phase.name, this.plan.budget - this.generated);
  }

  /**
   * A call's arguments are complete (their grammar admitted the end token). The reply ends there unless
   * it may make another call and one fits its budget; then, while it may not end yet (min_tokens,
   * ignore_eos), the next call opens at once, else the model chooses whether to make one.
   */
  private callEnded(): boolean | Promise<boolean> {
    this.out.arguments(this.out.flushTokens());
    const call = this.plan.shape.kind === 'tool' ? this.plan.shape.call : undefined;
    const next = call?.next;
    if (!call || !next || this.out.calls >= call.maxCalls || this.plan.budget - this.generated < next.leastTokens)
      return this.finish('tool_calls');
    if (this.generated < this.plan.minTokens) return this.openNextCall(call, next.suffix);
    // The end token just sampled is replaced by what closes the call; then the model chooses.
    this.dictated = [...next.suffix];
    this.phase = { kind: 'between' };
    this.holdTo(next.choice);
    return true;
  }

  /** Another call opens after `before`: its opening is written for the model, then it is held as the first was. */
  private openNextCall(call: ToolCallPlan, before: readonly Token[]): boolean | Promise<boolean> {
    const opening = [...before, ...(call.next?.opening ?? [])];
    const phase = callPhase(call);
    this.phase = phase;
    if (phase.kind !== 'args') {
      this.dictated = opening;
      this.holdTo(call.nameGrammar as LlamaGrammar);
      return true;
    }
    this.dictated = [...opening, ...this.model.tokenize(phase.name, false), ...call.paramsPrefix];
    return this.enterArguments(call, phase.name, this.plan.budget - this.generated);
  }

  private onName(phase: { text: string }, token: Token, ends: boolean): boolean | Promise<boolean> {
    if (this.plan.shape.kind !== 'tool') return this.finish('stop');
    if (!ends) {
      phase.text += this.out.tokenText(token);
      return this.generated < this.plan.budget || this.finish('length');
    }
    const name = phase.text + this.out.flushTokens();
    const call = this.plan.shape.call;
    // The end token that closed the name's grammar is replaced by what separates name and arguments.
    this.dictated = call.paramsPrefix.length ? [...call.paramsPrefix] : [];
    this.phase = { kind: 'args', name };
    return this.enterArguments(call, name, this.plan.budget - this.generated);
  }

  private async enterArguments(call: ToolCallPlan, name: string, budget: number): Promise<boolean> {
    const grammar = await call.argsGrammar(name, budget);
    if (!grammar) return this.finish('length');
    this.holdTo(grammar);
    this.out.callOpened(call.newCallId(), name);
    // With nothing to evaluate first, the sampled token stands: only the end token of a name is dropped.
    if (this.dictated && !this.dictated.length) this.dictated = undefined;
    return true;
  }

  private holdTo(grammar: LlamaGrammar): void {
    this.grammar = new LlamaGrammarEvaluationState({ model: this.model, grammar });
  }

  private currentBias(): TokenBias {
    // A grammar decides what may come next; a bias could leave it nothing to choose.
    if (this.grammar) return this.plan.bias.none;
    return (this.generated < this.plan.minTokens ? this.plan.bias.noEnd : undefined) ?? this.plan.bias.free;
  }

  private remember(token: Token): void {
    this.recent.push(token);
    if (this.recent.length > 2 * PENALTY_WINDOW) this.recent.splice(0, this.recent.length - PENALTY_WINDOW);
  }

  /** Frees the sampler before the sequence goes back to the context. */
  private end(): void {
    this.ended = true;
    this.sampling.dispose();
  }

  private finish(reason: FinishReason, aborted = false, stopMatched = false): false {
    if (this.ended) return false;
    let finishReason = reason;
    let stopString = stopMatched ? this.out.stopString : undefined;
    if (!aborted && !stopMatched) {
      if (this.phase.kind === 'text') {
        // The text held back at the end completed a stop string after all: that string ended the reply.
        if (this.out.flushText()) {
          finishReason = 'stop';
          stopString = this.out.stopString;
        }
      } else if (this.phase.kind === 'json') this.out.flushJson();
      else if (this.phase.kind === 'args') this.out.arguments(this.out.flushTokens());
    } else if (stopMatched) this.out.flushReasoning();
    this.end();
    this.settle({
      finishReason,
      ...(stopString !== undefined ? { stopString } : {}),
      generatedTokens: this.generated,
      aborted,
      cached: this.evaluated,
    });
    return false;
  }
}

function callPhase(call: ToolCallPlan): Extract<Phase, { kind: 'name' | 'args' }> {
  return call.forcedName ? { kind: 'args', name: call.forcedName } : { kind: 'name', text: '' };
}
