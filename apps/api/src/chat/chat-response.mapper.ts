import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChoiceLogprobs,
  FinishReason,
  TokenLogprob as WireLogprob,
  ToolCall,
} from '@conveyor/openai';
import type {
  ChoiceResult,
  FinishReason as JobFinishReason,
  ReplyEvent,
  ReplyResult,
  TokenLogprob,
  TokenUsage,
} from '@conveyor/queue';
import type { ReplyIdentity } from '../contracts/reply-run.js';
import { toUsage } from '../generation/wire-usage.js';

export type { ReplyIdentity } from '../contracts/reply-run.js';
export { toUsage } from '../generation/wire-usage.js';

export const toWireLogprobs = (tokens: readonly TokenLogprob[]): WireLogprob[] =>
  tokens.map((t) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: t.bytes,
    top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: a.bytes })),
  }));

const choiceLogprobs = (tokens: readonly TokenLogprob[] | undefined): ChoiceLogprobs | null =>
  tokens ? { content: toWireLogprobs(tokens), refusal: null } : null;

const toWireCall = (c: { id: string; name: string; arguments: string }): ToolCall => ({
  id: c.id,
  type: 'function',
  function: { name: c.name, arguments: c.arguments },
});

function toChoice(c: ChoiceResult): ChatCompletion['choices'][number] {
  const calls = c.toolCalls?.length ? c.toolCalls : undefined;
  return {
    index: c.index,
    message: {
      role: 'assistant',
      // OpenAI sends null content on a reply that only calls tools.
      content: calls && !c.text ? null : c.text,
      ...(c.reasoning !== undefined ? { reasoning_content: c.reasoning } : {}),
      ...(calls ? { tool_calls: calls.map(toWireCall) } : {}),
      refusal: null,
    },
    logprobs: choiceLogprobs(c.logprobs),
    finish_reason: c.finishReason,
  };
}

export function toChatCompletion(who: ReplyIdentity, reply: ReplyResult): ChatCompletion {
  return {
    id: who.id,
    object: 'chat.completion',
    created: who.created,
    model: who.model,
    service_tier: who.tier ?? 'default',
    system_fingerprint: null,
    choices: reply.choices.map(toChoice),
    usage: toUsage(reply.usage),
  };
}

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** Builds the chunks of one streamed reply; `includeUsage` adds OpenAI's `usage: null` field and final usage chunk. */
export class ChunkFormatter {
  constructor(
    private readonly who: ReplyIdentity,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(
    index: number,
    delta: Delta,
    finishReason: FinishReason | null,
    logprobs: ChoiceLogprobs | null = null,
  ): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.who.id,
      object: 'chat.completion.chunk',
      created: this.who.created,
      model: this.who.model,
      service_tier: this.who.tier ?? 'default',
      system_fingerprint: null,
      choices: [{ index, delta, logprobs, finish_reason: finishReason }],
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  /** The opening chunk of each of `choices`. */
  roleChunks(choices = 1): ChatCompletionChunk[] {
    return Array.from({ length: choices }, (_, i) => this.chunk(i, { role: 'assistant', content: '' }, null));
  }

  /** A delta event's chunks: reasoning, then text (with its logprobs), then the tool call piece. */
  deltaChunks(event: Extract<ReplyEvent, { type: 'delta' }>): ChatCompletionChunk[] {
    const index = event.choice ?? 0;
    const chunks: ChatCompletionChunk[] = [];
    if (event.reasoning) chunks.push(this.chunk(index, { reasoning_content: event.reasoning }, null));
    if (event.text || event.logprobs?.length)
      chunks.push(this.chunk(index, { content: event.text }, null, choiceLogprobs(event.logprobs)));
    const call = event.toolCall;
    if (call) {
      const head = call.id !== undefined ? { id: call.id, type: 'function' as const } : {};
      const fn =
        call.name !== undefined ? { name: call.name, arguments: call.arguments } : { arguments: call.arguments };
      chunks.push(this.chunk(index, { tool_calls: [{ index: call.index, ...head, function: fn }] }, null));
    }
    return chunks;
  }

  /** The closing chunks: an empty delta with each choice's finish reason, then the usage chunk when asked for. */
  finalChunks(finishReasons: readonly JobFinishReason[], usage: TokenUsage): ChatCompletionChunk[] {
    const chunks = finishReasons.map((reason, i) => this.chunk(i, {}, reason));
    if (!this.includeUsage) return chunks;
    chunks.push({
      id: this.who.id,
      object: 'chat.completion.chunk',
      created: this.who.created,
      model: this.who.model,
      service_tier: this.who.tier ?? 'default',
      system_fingerprint: null,
      choices: [],
      usage: toUsage(usage),
    });
    return chunks;
  }
}
