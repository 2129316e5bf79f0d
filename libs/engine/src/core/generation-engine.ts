import type { FinishReason, GenerationJobData, TokenLogprob, TokenUsage, ToolCallDelta } from '@conveyor/queue';

/** What the engine generates from: the queue's job (chat turns or raw prompts, sampling, budget, shape). */
export type GenerationInput = Pick<
  GenerationJobData,
  | 'messages'
  | 'prompts'
  | 'tools'
  | 'toolChoice'
  | 'parallelToolCalls'
  | 'responseFormat'
  | 'sampling'
  | 'maxTokens'
  | 'clampToContext'
  | 'stop'
  | 'n'
  | 'logprobs'
>;

/** One generation: the job's input, with how this attempt runs it. */
export interface GenerateRequest extends GenerationInput {
  signal?: AbortSignal;
  /**
   * The reply an earlier attempt already sent: generation continues its text instead of starting over,
   * and counts its tokens (as generated, which re-tokenizing the text would not give back) against the budget.
   */
  continueFrom?: { text: string; tokens: number };
}

/** A piece of one choice's output, in reply order: reasoning, text, then tool call. */
export interface OutputPiece {
  choice: number;
  text?: string;
  reasoning?: string;
  toolCall?: ToolCallDelta;
  logprobs?: TokenLogprob[];
  /** Tokens this choice has generated so far, those of a reply it continues included. */
  tokens?: number;
}

export interface GenerateCallbacks {
  /** Called once, before any output, with the prompt's token count. */
  onStart(promptTokens: number): void;
  onOutput(piece: OutputPiece): void;
}

export interface GenerateResult {
  /** Choice 0's. */
  finishReason: FinishReason;
  finishReasons: FinishReason[];
  /**
   * By choice, the request's stop string that ended it (null: it ended otherwise); absent when none
   * did, or where the engine cannot tell which one matched.
   */
  stopSequences?: Array<string | null>;
  usage: TokenUsage;
  /** The request's signal fired; the text so far was not a complete reply. */
  aborted: boolean;
  /**
   * The sequence each choice ran on, whose cells now hold its prompt and reply for a later request to
   * reuse; absent where the engine keeps no prompt cache (or nothing was generated).
   */
  sequences?: number[];
}

/**
 * A change to the prompts an engine keeps beyond its sequences' cells (node-llama-cpp's prompt cache in
 * host memory). `kept`: a request was about to cut a sequence's cells, and they were saved as `entry`
 * first, so what the sequence held is still held, under the entry. `dropped`: the entry is gone.
 */
export type HeldPromptChange = { kind: 'kept'; sequence: number; entry: number } | { kind: 'dropped'; entry: number };

/** Token counting with the very tokenizer and chat template an engine generates with. */
export interface EngineTokenizer {
  /** Tokens of context one request gets, prompt and reply together. */
  readonly contextSize: number;
  /** The prompt's tokens as a generation of these turns evaluates them: what its usage counts as prompt tokens. */
  chat(request: Pick<GenerationInput, 'messages' | 'tools' | 'toolChoice'>): Promise<number[]>;
  /** Text as it is, no template; `addSpecialTokens`: with the tokens the model puts in front of a sequence. */
  text(text: string, addSpecialTokens: boolean): Promise<number[]>;
  /** Token ids back into text, special tokens written out; an id outside the vocabulary is an EngineInputError. */
  detokenize(tokens: readonly number[]): Promise<string>;
}

/** The port the worker generates through; node-llama-cpp is one implementation. */
export interface GenerationEngine {
  /** Whether a reply can be continued from the text already sent (`continueFrom`): not when reasoning is split out of it. */
  readonly continuesReplies: boolean;
  /** Absent where the engine cannot tokenize as it generates (an upstream renders its prompts itself). */
  readonly tokenizer?: EngineTokenizer;
  generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult>;
  /**
   * `listener` runs after each round of an engine that decodes its replies in rounds (one batch, one
   * decode, a sample per reply), once every reply's output of the round is out: for whoever batches that
   * output by round (the reply outbox). Absent where the engine has no rounds of its own to tell.
   */
  onRound?(listener: () => void): void;
  /**
   * `listener` hears of prompts kept beyond the sequences, in the order they change, as they change: for
   * the router, which announces them with the sequences'. Absent where the engine keeps none.
   */
  onHeldPrompts?(listener: (change: HeldPromptChange) => void): void;
  dispose(): Promise<void>;
}

/** Output that failed the request's own check (a JSON result that does not conform to its schema) after a retry. */
export class EngineOutputError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'EngineOutputError';
  }
}

/** Input that no retry can fix (a prompt longer than the context, say). `param`: the request field at fault. */
export class EngineInputError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'EngineInputError';
  }
}
