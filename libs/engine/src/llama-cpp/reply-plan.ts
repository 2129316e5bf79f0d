import type { LlamaGrammar, Token, TokenBias } from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import type { OutputPiece } from '../core/generation-engine.js';
import type { ReasoningSplitter } from '../core/reasoning-splitter.js';
import type { SamplingOptions } from './llama-options.js';

/** How a tool call is produced: the model's own call syntax, with the arguments held to their schema by grammar. */
export interface ToolCallPlan {
  /** Auto: text the model writes to start a call. Empty when the prompt already opens the call (a forced call). */
  triggers: string[];
  /**
   * Auto, with a response format: what the reply's text may be, the format's JSON or a call's opening. Unset,
   * the text is free.
   */
  textGrammar?: LlamaGrammar;
  /** The one function the call must name (a named tool_choice, or the only tool): its name is written for the model. */
  forcedName?: string;
  /** Chooses among the tools' names when the model must pick one. */
  nameGrammar?: LlamaGrammar;
  /** What the syntax puts between a function's name and its arguments. */
  paramsPrefix: Token[];
  /** A grammar of the function's arguments whose longest output fits `budget` tokens; null when none fits. */
  argsGrammar(name: string, budget: number): Promise<LlamaGrammar | null>;
  /** A fresh id for each call of the reply. */
  newCallId(): string;
  /** The most calls one reply makes: one for a named tool_choice or parallel_tool_calls false. */
  maxCalls: number;
  /** How a call is followed by another, where the template has a syntax for several calls in one reply. */
  next?: NextCallPlan;
  /**
   * Where a tool's parameters have keywords the grammar cannot hold: why a complete reply's calls do not
   * conform (null when they do). Such a reply is held back until checked, and run again once when it fails.
   */
  check?: (calls: readonly WrittenCall[]) => string | null;
}

/** A call as the reply wrote it, its deltas joined. */
export interface WrittenCall {
  name: string;
  arguments: string;
}

/** After a call: the model either ends the reply or opens another call, which is then held like the first. */
export interface NextCallPlan {
  /** What closes a call that another one follows. */
  suffix: Token[];
  /** What opens the next call (the template's text between calls, then a call's opening). */
  opening: Token[];
  /** Lets the model choose between ending the reply and the start of `opening`; nothing else. */
  choice: LlamaGrammar;
  /** Tokens to generate that any further call needs at least: another is only offered when they fit. */
  leastTokens: number;
}

/**
 * `check`, on a JSON reply whose schema has keywords the grammar cannot hold: why a complete reply's text
 * does not conform (null when it does). Such a reply is held back until checked, and run again once when it fails.
 */
export type ReplyShape =
  | { kind: 'text' }
  | { kind: 'json'; grammar: LlamaGrammar; check?: (text: string) => string | null }
  | { kind: 'tool'; call: ToolCallPlan };

/** Everything one reply needs to run on its sequence. */
export interface ReplyPlan {
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
  /** The sampler's options; repetition penalties look at `recent`, the tokens this reply keeps track of. */
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

export interface ReplyOutcome {
  /** The tokens in the sequence's cells when the reply ended (prompt and reply as evaluated); null when unknown. */
  cached: Token[] | null;
  finishReason: FinishReason;
  /** The stop string that ended the reply: the request's, or one of the chat template's end markers. */
  stopString?: string;
  /** Tokens the model produced, counting an end-of-generation token it sampled. */
  generatedTokens: number;
  aborted: boolean;
}
