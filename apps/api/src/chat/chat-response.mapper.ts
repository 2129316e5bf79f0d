import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '@conveyor/openai';
import type { TokenUsage } from '@conveyor/queue';

export interface ReplyIdentity {
  id: string;
  model: string;
  created: number;
}

export const toUsage = (u: TokenUsage): Usage => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.promptTokens + u.completionTokens,
});

export function toChatCompletion(who: ReplyIdentity, content: string, finishReason: FinishReason, usage: TokenUsage): ChatCompletion {
  return {
    id: who.id,
    object: 'chat.completion',
    created: who.created,
    model: who.model,
    system_fingerprint: null,
    choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finishReason }],
    usage: toUsage(usage),
  };
}

/** Builds the chunks of one streamed reply; `includeUsage` adds OpenAI's `usage: null` field and final usage chunk. */
export class ChunkFormatter {
  constructor(
    private readonly who: ReplyIdentity,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.who.id,
      object: 'chat.completion.chunk',
      created: this.who.created,
      model: this.who.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  roleChunk(): ChatCompletionChunk {
    return this.chunk({ role: 'assistant', content: '' }, null);
  }

  contentChunk(text: string): ChatCompletionChunk {
    return this.chunk({ content: text }, null);
  }

  /** The closing chunks: empty delta with the finish reason, then the usage chunk when asked for. */
  finalChunks(finishReason: FinishReason, usage: TokenUsage): ChatCompletionChunk[] {
    const last = this.chunk({}, finishReason);
    if (!this.includeUsage) return [last];
    return [
      last,
      {
        id: this.who.id,
        object: 'chat.completion.chunk',
        created: this.who.created,
        model: this.who.model,
        system_fingerprint: null,
        choices: [],
        usage: toUsage(usage),
      },
    ];
  }
}
