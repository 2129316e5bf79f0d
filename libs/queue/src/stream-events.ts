import type { FinishReason, TokenUsage } from './generation-job.js';

/** One alternative of a token's log-probability. `bytes`: the token's UTF-8 bytes (a token may hold part of a character). */
export interface TokenAlternative {
  token: string;
  logprob: number;
  bytes: number[];
}

/** A generated token's log-probability, with the most likely alternatives when they were asked for. */
export interface TokenLogprob extends TokenAlternative {
  top: TokenAlternative[];
}

/** A piece of a tool call: the first piece of call `index` carries its id and name, later ones more argument text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

/**
 * The events of a request's reply, in the order a worker writes them (to its API replica's inbox:
 * see reply-codec.ts for how they are written). `attempt`
 * fences retries: once a reader has seen attempt N start, it drops events of
 * earlier attempts, so a stalled worker's late chunks never interleave.
 * `seq` numbers the events of one attempt from 0, so a reader can tell a
 * repeated event from a new one.
 */
interface EventBase {
  attempt: number;
  seq: number;
}

export type ReplyEvent =
  /** `resumed`: this attempt continues the text earlier attempts already sent; otherwise the reply starts over. */
  | (EventBase & { type: 'start'; promptTokens: number; resumed: boolean })
  /**
   * Output of one choice (`choice` absent: 0). Within one event the reasoning precedes the text,
   * and the text precedes the tool call piece, as they do in a reply.
   */
  | (EventBase & {
      type: 'delta';
      /** Tokens this choice has generated so far, across the attempts it continues. */
      tokens?: number;
      text: string;
      choice?: number;
      reasoning?: string;
      toolCall?: ToolCallDelta;
      logprobs?: TokenLogprob[];
    })
  /** One input's embedding: little-endian float32 values, base64-encoded. */
  | (EventBase & { type: 'embedding'; index: number; vector: string })
  /**
   * A tokenize job's answer: the token ids (a detokenize job's: its `text`), and the tokens of context
   * the deployment gives a request.
   */
  | (EventBase & { type: 'tokens'; tokens: number[]; maxModelLen: number; text?: string })
  /**
   * `finishReasons`: every choice's, when there are several; `finishReason` is choice 0's.
   * `stopSequences`: by choice, the request's stop string that ended it (null: it ended otherwise);
   * absent when none did.
   */
  | (EventBase & {
      type: 'end';
      finishReason: FinishReason;
      finishReasons?: FinishReason[];
      stopSequences?: Array<string | null>;
      usage: TokenUsage;
    })
  /** `param`: the request field at fault, when the worker can name one. */
  | (EventBase & { type: 'error'; status: number; code: string; message: string; param?: string });

/** An event as the publisher hands it over, before it is numbered. */
export type UnnumberedReplyEvent = ReplyEvent extends infer E ? (E extends ReplyEvent ? Omit<E, 'seq'> : never) : never;
