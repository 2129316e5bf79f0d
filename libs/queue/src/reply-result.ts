import type { FinishReason, TokenUsage, ToolCall } from './generation-job.js';
import type { ReplyEvent, TokenLogprob } from './stream-events.js';

/** One choice of a finished reply. */
export interface ChoiceResult {
  index: number;
  text: string;
  /** The thought segment, when the deployment parses reasoning out of the reply. */
  reasoning?: string;
  toolCalls?: ToolCall[];
  logprobs?: TokenLogprob[];
  finishReason: FinishReason;
}

/** A whole reply, as a non-streamed response or a batch line reports it. */
export interface ReplyResult {
  choices: ChoiceResult[];
  usage: TokenUsage;
  /** Embedding requests: one base64 float32 vector per input, in input order. */
  embeddings?: string[];
}

type Accumulated = Omit<ChoiceResult, 'finishReason'>;

/**
 * Folds a reply's events into its result. A `start` that does not resume
 * means the reply started over, so what was gathered before is dropped.
 */
export class ReplyAccumulator {
  private choices = new Map<number, Accumulated>();
  private embeddings: string[] = [];

  /** Returns the finished result on the `end` event, else null. */
  apply(event: ReplyEvent): ReplyResult | null {
    switch (event.type) {
      case 'start':
        if (!event.resumed) {
          this.choices.clear();
          this.embeddings = [];
        }
        return null;
      case 'delta':
        this.addDelta(event);
        return null;
      case 'embedding':
        this.embeddings[event.index] = event.vector;
        return null;
      case 'end':
        return this.finish(event.finishReason, event.finishReasons, event.usage);
      case 'error':
        return null;
    }
  }

  private choice(index: number): Accumulated {
    let c = this.choices.get(index);
    if (!c) this.choices.set(index, (c = { index, text: '' }));
    return c;
  }

  private addDelta(event: Extract<ReplyEvent, { type: 'delta' }>): void {
    const c = this.choice(event.choice ?? 0);
    if (event.reasoning) c.reasoning = (c.reasoning ?? '') + event.reasoning;
    c.text += event.text;
    if (event.logprobs?.length) (c.logprobs ??= []).push(...event.logprobs);
    const piece = event.toolCall;
    if (piece) {
      const calls = (c.toolCalls ??= []);
      const call = (calls[piece.index] ??= { id: piece.id ?? '', name: piece.name ?? '', arguments: '' });
      if (piece.id) call.id = piece.id;
      if (piece.name) call.name = piece.name;
      call.arguments += piece.arguments;
    }
  }

  private finish(first: FinishReason, all: FinishReason[] | undefined, usage: TokenUsage): ReplyResult {
    const count = Math.max(all?.length ?? 1, this.choices.size, ...[...this.choices.keys()].map((k) => k + 1));
    const choices: ChoiceResult[] = [];
    for (let index = 0; index < count; index++) {
      choices.push({ ...(this.choices.get(index) ?? { index, text: '' }), finishReason: all?.[index] ?? first });
    }
    return { choices, usage, ...(this.embeddings.length ? { embeddings: this.embeddings } : {}) };
  }
}
