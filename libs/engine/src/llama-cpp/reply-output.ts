import type { LlamaModel, Token } from 'node-llama-cpp';
import type { TokenLogprob } from '@conveyor/queue';
import type { OutputPiece } from '../core/generation-engine.js';
import { StopMatcher, type StopMatch } from '../core/stop-matcher.js';
import { TokenText } from '../core/token-text.js';
import type { ReplyPlan } from './reply-plan.js';

/** What a text token ran into: nothing, a stop string, or the opening of a tool call. */
export type TextTurn = 'more' | 'stop' | 'call';

/**
 * What one reply says, token by token: text decoded, held back while it may be the start of a stop
 * string (or of a tool call's opening), split into reasoning and content, with log-probabilities; a
 * call's name and arguments. Every piece carries the tokens generated so far.
 */
export class ReplyOutput {
  private readonly text: TokenText<Token>;
  private readonly stops: StopMatcher;
  private readonly triggers: StopMatcher | null;
  /** Tool calls opened so far: the next one's index. */
  private opened = 0;
  /** The stop string the text last stopped at. */
  private matched: string | undefined;

  constructor(
    private readonly model: LlamaModel,
    private readonly plan: Pick<ReplyPlan, 'stops' | 'shape' | 'logprobs' | 'reasoning' | 'emit'>,
    /** Tokens generated so far, as each piece reports them. */
    private readonly generated: () => number,
  ) {
    this.text = new TokenText((tokens, lastTokens) => model.detokenize(tokens, false, lastTokens));
    this.stops = new StopMatcher(plan.stops);
    const shape = plan.shape;
    this.triggers = shape.kind === 'tool' && shape.call.triggers.length ? new StopMatcher(shape.call.triggers) : null;
  }

  /** The stop string that ended the text, once one has. */
  get stopString(): string | undefined {
    return this.matched;
  }

  /** Whether the reply starts as free text that may open a call (rather than inside the call). */
  get watchesForCall(): boolean {
    return this.triggers !== null;
  }

  /** A token of free text: emitted as far as no stop string (nor a call's opening) may begin there. */
  freeText(token: Token, probabilities: Map<Token, number> | undefined): TextTurn {
    let text = this.text.push(token);
    const logprob = this.logprob(token, probabilities);
    if (this.triggers) {
      const trigger = this.triggers.push(text);
      text = trigger.text;
      if (trigger.stopped) {
        const piece = this.stop(text);
        this.emitText(piece.text + (piece.stopped ? '' : this.stops.flush()), logprob);
        return piece.stopped ? 'stop' : 'call';
      }
    }
    const piece = this.stop(text);
    this.emitText(piece.text, logprob);
    return piece.stopped ? 'stop' : 'more';
  }

  /** A token of JSON held to a grammar: no stop strings, no reasoning split. */
  json(token: Token, probabilities: Map<Token, number> | undefined): void {
    this.emitText(this.text.push(token), this.logprob(token, probabilities), true);
  }

  /** The text a token adds, for the caller to emit (a call's name, announced whole, or its arguments). */
  tokenText(token: Token): string {
    return this.text.push(token);
  }

  /** The rest of the text of the last tokens (a character they left unfinished). */
  flushTokens(): string {
    return this.text.flush();
  }

  /** Tool calls opened so far. */
  get calls(): number {
    return this.opened;
  }

  /** A call starts, numbered from 0 in the reply: its id and name, with empty arguments so far. */
  callOpened(callId: string, name: string): void {
    this.emit({ toolCall: { index: this.opened++, id: callId, name, arguments: '' } });
  }

  /** More argument text of the last call opened. */
  arguments(text: string): void {
    if (text) this.emit({ toolCall: { index: this.opened - 1, arguments: text } });
  }

  /** The JSON's held text at the end. */
  flushJson(): void {
    this.emitText(this.text.flush(), undefined, true);
  }

  /**
   * Text still held (a possible call opening, an unfinished character, a possible stop string's start)
   * belongs to the reply; true when it completed a stop string after all.
   */
  flushText(): boolean {
    const held = (this.triggers?.flush() ?? '') + this.text.flush();
    const last = this.stop(held);
    this.emitText(last.stopped ? last.text : last.text + this.stops.flush());
    this.flushReasoning();
    return last.stopped;
  }

  flushReasoning(): void {
    const rest = this.plan.reasoning?.flush();
    if (rest && (rest.reasoning || rest.content))
      this.emit({ reasoning: rest.reasoning || undefined, text: rest.content });
  }

  /** The stop matcher's verdict on more text, remembering the stop string it ended at. */
  private stop(text: string): StopMatch {
    const piece = this.stops.push(text);
    if (piece.stopped) this.matched = piece.matched;
    return piece;
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

  /** `raw`: JSON, which is never split into reasoning and content. */
  private emitText(text: string, logprob?: TokenLogprob, raw = false): void {
    const logprobs = logprob ? [logprob] : undefined;
    if (!text && !logprobs) return;
    if (!this.plan.reasoning || raw) {
      this.emit({ text, logprobs });
      return;
    }
    const split = this.plan.reasoning.push(text);
    if (split.reasoning || split.content || logprobs)
      this.emit({ reasoning: split.reasoning || undefined, text: split.content, logprobs });
  }

  private emit(piece: Omit<OutputPiece, 'choice' | 'tokens'>): void {
    this.plan.emit({ ...piece, tokens: this.generated() });
  }
}
