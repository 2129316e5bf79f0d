import type { OutputPiece } from '@conveyor/engine';
import type { FinishReason, SentReply, TokenUsage } from '@conveyor/queue';

/** Appends one request attempt's events to its reply stream, in order. */
export interface ReplyPublisher {
  start(promptTokens: number, resumed: boolean): void;
  output(piece: OutputPiece): void;
  /** One input's embedding (`vector`: little-endian float32 bytes, base64), after any pending text. */
  embedding(index: number, vector: string): void;
  /** `finishReasons`: every choice's, in choice order. Resolves once every event of the attempt is written. */
  end(finishReasons: readonly FinishReason[], usage: TokenUsage): Promise<void>;
  /** Ends the reply with an error the client sees; resolves once every event of the attempt is written. */
  fail(status: number, code: string, message: string, param?: string | null): Promise<void>;
}

/**
 * Where a worker writes replies: a publisher per job attempt, and what earlier attempts already
 * sent. The job handlers depend on this port; the Redis stream writer is the adapter behind it.
 */
export abstract class ReplyPublisherFactory {
  /** What the request's client has been sent so far, by the same rule the API relays with. */
  abstract replay(requestId: string): Promise<SentReply>;
  abstract open(requestId: string, attempt: number): ReplyPublisher;
}
