import type { ChatTurn, FinishReason, OutputFormat, Sampling, TokenLogprob, TokenUsage, ToolCallDelta, ToolChoice, ToolSpec } from '@conveyor/queue';

export interface GenerateRequest {
  messages: ChatTurn[];
  /** Raw prompts (legacy completions), generated from without the chat template; replaces `messages`. */
  prompts?: string[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  responseFormat?: OutputFormat;
  sampling: Sampling;
  maxTokens?: number;
  stop: string[];
  /** Choices per prompt. */
  n?: number;
  /** Per-token log-probabilities with this many alternatives. */
  logprobs?: number;
  signal?: AbortSignal;
  /** Reply text already sent by an earlier attempt: generation continues it instead of starting over. */
  continueFrom?: string;
}

/** A piece of one choice's output, in reply order: reasoning, text, then tool call. */
export interface OutputPiece {
  choice: number;
  text?: string;
  reasoning?: string;
  toolCall?: ToolCallDelta;
  logprobs?: TokenLogprob[];
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
  usage: TokenUsage;
  /** The request's signal fired; the text so far was not a complete reply. */
  aborted: boolean;
}

/** The port the worker generates through; node-llama-cpp is one implementation. */
export interface ChatEngine {
  /** Whether a reply can be continued from the text already sent (`continueFrom`): not when reasoning is split out of it. */
  readonly continuesReplies: boolean;
  generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult>;
  dispose(): Promise<void>;
}

/** Input that no retry can fix (a prompt longer than the context, say). */
export class EngineInputError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'EngineInputError';
  }
}
