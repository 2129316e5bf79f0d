import type { ChatTurn, FinishReason, Sampling, TokenUsage } from '@conveyor/queue';

export interface GenerateRequest {
  messages: ChatTurn[];
  sampling: Sampling;
  maxTokens?: number;
  stop: string[];
  signal?: AbortSignal;
  /** Reply text already sent by an earlier attempt: generation continues it instead of starting over. */
  continueFrom?: string;
}

export interface GenerateCallbacks {
  /** Called once, before any text, with the prompt's token count. */
  onStart(promptTokens: number): void;
  onText(text: string): void;
}

export interface GenerateResult {
  finishReason: FinishReason;
  usage: TokenUsage;
  /** The request's signal fired; the text so far was not a complete reply. */
  aborted: boolean;
}

/** The port the worker generates through; node-llama-cpp is one implementation. */
export interface ChatEngine {
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
