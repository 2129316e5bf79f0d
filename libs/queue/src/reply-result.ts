import type { FinishReason, TokenUsage, ToolCall } from './generation-job.js';
import type { ReplyEvent, TokenLogprob, ToolCallDelta } from './stream-events.js';

/** One choice of a finished reply. */
export interface ChoiceResult {
  index: number;
  text: string;
  /** The thought segment, when the deployment parses reasoning out of the reply. */
  reasoning?: string;
  toolCalls?: ToolCall[];
  logprobs?: TokenLogprob[];
  finishReason: FinishReason;
  /** The request's stop string that ended this choice; absent when it ended otherwise. */
  stopSequence?: string;
}

/** A whole reply, as a non-streamed response or a batch line reports it. */
export interface ReplyResult {
  choices: ChoiceResult[];
  usage: TokenUsage;
  /** Embedding requests: one base64 float32 vector per input, in input order. */
  embeddings?: string[];
  /** Tokenize requests: the answer. */
  tokenized?: Tokenized;
}

/** A tokenize job's answer: token ids (or, detokenizing, their text) and the deployment's context per request. */
export interface Tokenized {
  tokens: number[];
  maxModelLen: number;
  text?: string;
}

type Accumulated = Omit<ChoiceResult, 'finishReason'>;

/** What one piece of output adds to a choice, as a delta event carries it. */
export interface ReplyPiece {
  text?: string;
  reasoning?: string;
  toolCall?: ToolCallDelta;
  logprobs?: TokenLogprob[];
}

/**
 * Folds a reply into its result: from its stream's events (`apply`), or piece by piece as it is
 * generated (`add`, `embedding`, `finish`). A `start` that does not resume means the reply
 * started over, so what was gathered before is dropped.
 */
export class ReplyAccumulator {
  private choices = new Map<number, Accumulated>();
  private embeddings: string[] = [];
  private tokenized: Tokenized | undefined;

  /** Returns the finished result on the `end` event, else null. */
  apply(event: ReplyEvent): ReplyResult | null {
    switch (event.type) {
      case 'start':
        if (!event.resumed) {
          this.choices.clear();
          this.embeddings = [];
          this.tokenized = undefined;
        }
        return null;
      case 'delta':
        this.add(event.choice ?? 0, event);
        return null;
      case 'embedding':
        this.embedding(event.index, event.vector);
        return null;
      case 'tokens':
        this.tokens({
          tokens: event.tokens,
          maxModelLen: event.maxModelLen,
          ...(event.text !== undefined ? { text: event.text } : {}),
        });
        return null;
      case 'end':
        return this.finish(event.finishReasons ?? [event.finishReason], event.usage, event.stopSequences);
      case 'error':
        return null;
    }
  }

  private choice(index: number): Accumulated {
    let c = this.choices.get(index);
    if (!c) this.choices.set(index, (c = { index, text: '' }));
    return c;
  }

  /** Adds a piece of choice `index`'s output. */
  add(index: number, piece: ReplyPiece): void {
    const c = this.choice(index);
    if (piece.reasoning) c.reasoning = (c.reasoning ?? '') + piece.reasoning;
    if (piece.text) c.text += piece.text;
    if (piece.logprobs?.length) (c.logprobs ??= []).push(...piece.logprobs);
    const call = piece.toolCall;
    if (call) {
      const calls = (c.toolCalls ??= []);
      const held = (calls[call.index] ??= { id: call.id ?? '', name: call.name ?? '', arguments: '' });
      if (call.id) held.id = call.id;
      if (call.name) held.name = call.name;
      held.arguments += call.arguments;
    }
  }

  /** A tokenize job's answer. */
  tokens(tokenized: Tokenized): void {
    this.tokenized = tokenized;
  }

  /** One input's embedding (base64 float32). */
  embedding(index: number, vector: string): void {
    this.embeddings[index] = vector;
  }

  /**
   * The finished reply. `finishReasons`: every choice's, in choice order (one: it is every choice's);
   * `stopSequences`: by choice, the stop string that ended it, if any.
   */
  finish(
    finishReasons: readonly FinishReason[],
    usage: TokenUsage,
    stopSequences: ReadonlyArray<string | null> = [],
  ): ReplyResult {
    const count = Math.max(finishReasons.length, this.choices.size, ...[...this.choices.keys()].map((k) => k + 1));
    const first = finishReasons[0] ?? 'stop';
    const choices: ChoiceResult[] = [];
    for (let index = 0; index < count; index++) {
      const stopSequence = stopSequences[index];
      choices.push({
        ...(this.choices.get(index) ?? { index, text: '' }),
        finishReason: finishReasons[index] ?? first,
        ...(typeof stopSequence === 'string' ? { stopSequence } : {}),
      });
    }
    return {
      choices,
      usage,
      ...(this.embeddings.length ? { embeddings: this.embeddings } : {}),
      ...(this.tokenized ? { tokenized: this.tokenized } : {}),
    };
  }
}
