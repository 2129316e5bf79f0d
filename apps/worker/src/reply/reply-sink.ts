import type { OutputPiece } from '@conveyor/engine';
import type { FinishReason, TokenUsage, Tokenized } from '@conveyor/queue';

/** How a reply ended, as the engine reports it. */
export interface ReplyEnding {
  /** Every choice's, in choice order. */
  readonly finishReasons: readonly FinishReason[];
  readonly usage: TokenUsage;
  /** By choice, the request's stop string that ended it (null: none); absent when none did. */
  readonly stopSequences?: ReadonlyArray<string | null>;
}

/**
 * Where one attempt of a job sends its reply as the engine produces it: the client's reply stream,
 * or the result of the batch line the job is. The job handlers drive every job through this, so a
 * reply and a batch line run the same path.
 */
export interface ReplySink {
  /** `resumed`: this attempt continues the text an earlier attempt already sent. */
  start(promptTokens: number, resumed: boolean): void;
  output(piece: OutputPiece): void;
  /** One input's embedding (`vector`: little-endian float32 bytes, base64), after any pending output. */
  embedding(index: number, vector: string): void;
  /** A tokenize job's answer, after any pending output. */
  tokens(tokenized: Tokenized): void;
  /** Ends the reply; resolves once it is where it is awaited. */
  end(ending: ReplyEnding): Promise<void>;
  /** Ends the reply with an error its reader sees; resolves once that is where it is awaited. */
  fail(status: number, code: string, message: string, param?: string | null): Promise<void>;
}
