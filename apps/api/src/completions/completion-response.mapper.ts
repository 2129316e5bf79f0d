import type { Completion, CompletionChunk, CompletionFinishReason, CompletionLogprobs } from '@conveyor/openai';
import type { ChoiceResult, FinishReason, ReplyEvent, ReplyResult, TokenLogprob, TokenUsage } from '@conveyor/queue';
import type { ReplyIdentity } from '../contracts/reply-run.js';
import { toUsage } from '../generation/wire-usage.js';

/** What of the request shapes the reply beyond the generated text. */
export interface CompletionShape {
  /** `echo`: each choice starts with its prompt; choice `p * n + i` is prompt p's. */
  echo?: { prompts: readonly string[]; n: number };
  /** Logprobs were asked for, so a choice with no tokens still gets (empty) lists rather than null. */
  logprobs?: boolean;
}

/** Legacy completions have no tool calls; a job's other reasons map as they are. */
const toFinishReason = (reason: FinishReason): CompletionFinishReason => (reason === 'length' ? 'length' : 'stop');

const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

/**
 * Builds one choice's legacy logprobs, token by token, across stream deltas.
 * `text_offset` counts characters (code points, as OpenAI's Python server
 * does) from the start of the choice's text. A token may hold part of a
 * character: the streaming decoder counts the character once it is whole, at
 * the token that completes it.
 */
export class LegacyLogprobs {
  private readonly decoder = new TextDecoder();

  constructor(private offset = 0) {}

  append(tokens: readonly TokenLogprob[]): CompletionLogprobs {
    const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
    for (const t of tokens) {
      out.tokens.push(t.token);
      out.token_logprobs.push(t.logprob);
      // Two alternatives can share a text (different ids); the likelier one, listed first, keeps the key.
      const top = new Map<string, number>();
      for (const a of t.top) if (!top.has(a.token)) top.set(a.token, a.logprob);
      // fromEntries defines own properties, so a token such as "__proto__" stays an ordinary key.
      out.top_logprobs.push(Object.fromEntries(top));
      out.text_offset.push(this.offset);
      this.offset += codePoints(this.decoder.decode(Uint8Array.from(t.bytes), { stream: true }));
    }
    return out;
  }
}

const echoed = (shape: CompletionShape, index: number): string =>
  shape.echo ? (shape.echo.prompts[Math.floor(index / shape.echo.n)] ?? '') : '';

function toChoice(c: ChoiceResult, shape: CompletionShape): Completion['choices'][number] {
  const prompt = echoed(shape, c.index);
  const logprobs =
    c.logprobs || shape.logprobs ? new LegacyLogprobs(codePoints(prompt)).append(c.logprobs ?? []) : null;
  return { text: prompt + c.text, index: c.index, logprobs, finish_reason: toFinishReason(c.finishReason) };
}

export function toCompletion(who: ReplyIdentity, reply: ReplyResult, shape: CompletionShape = {}): Completion {
  return {
    id: who.id,
    object: 'text_completion',
    created: who.created,
    model: who.model,
    system_fingerprint: null,
    choices: reply.choices.map((c) => toChoice(c, shape)),
    usage: toUsage(reply.usage),
  };
}

/** Builds the chunks of one streamed reply; `includeUsage` adds OpenAI's `usage: null` field and final usage chunk. */
export class CompletionChunkFormatter {
  private readonly logprobs = new Map<number, LegacyLogprobs>();

  constructor(
    private readonly who: ReplyIdentity,
    private readonly includeUsage: boolean,
    private readonly shape: CompletionShape = {},
  ) {}

  private chunk(choices: CompletionChunk['choices']): CompletionChunk {
    const chunk: CompletionChunk = {
      id: this.who.id,
      object: 'text_completion',
      created: this.who.created,
      model: this.who.model,
      system_fingerprint: null,
      choices,
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  /** With echo, each of `choices` opens with its prompt; otherwise nothing comes before the generated text. */
  openingChunks(choices: number): CompletionChunk[] {
    if (!this.shape.echo) return [];
    return Array.from({ length: choices }, (_, index) =>
      this.chunk([{ text: echoed(this.shape, index), index, logprobs: null, finish_reason: null }]),
    );
  }

  /** A delta event's chunk: its text, with its tokens' logprobs when they were asked for. */
  deltaChunks(event: Extract<ReplyEvent, { type: 'delta' }>): CompletionChunk[] {
    if (!event.text && !event.logprobs?.length) return [];
    const index = event.choice ?? 0;
    let logprobs: CompletionLogprobs | null = null;
    if (event.logprobs?.length || this.shape.logprobs) {
      let builder = this.logprobs.get(index);
      if (!builder) this.logprobs.set(index, (builder = new LegacyLogprobs(codePoints(echoed(this.shape, index)))));
      logprobs = builder.append(event.logprobs ?? []);
    }
    return [this.chunk([{ text: event.text, index, logprobs, finish_reason: null }])];
  }

  /** The closing chunks: an empty text with each of `choices`' finish reason, then the usage chunk when asked for. */
  finalChunks(finishReasons: readonly FinishReason[], choices: number, usage: TokenUsage): CompletionChunk[] {
    const chunks = Array.from({ length: Math.max(choices, finishReasons.length) }, (_, index) =>
      this.chunk([
        {
          text: '',
          index,
          logprobs: null,
          finish_reason: toFinishReason(finishReasons[index] ?? finishReasons[0] ?? 'stop'),
        },
      ]),
    );
    if (!this.includeUsage) return chunks;
    chunks.push({ ...this.chunk([]), usage: toUsage(usage) });
    return chunks;
  }
}
