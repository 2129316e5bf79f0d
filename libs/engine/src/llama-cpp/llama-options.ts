import type { ChatHistoryItem, SequenceEvaluateOptions, Token } from 'node-llama-cpp';
import type { ChatTurn, Sampling } from '@conveyor/queue';

/** How far back repetition penalties look, as llama.cpp's server does by default. */
export const PENALTY_WINDOW = 64;

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * OpenAI messages → node-llama-cpp history, ending in the model turn to be generated (or continued from `partial`).
 * A tool message becomes the result of the call it answers, which is how node-llama-cpp's templates render it.
 */
export function toChatHistory(messages: readonly ChatTurn[], partial = ''): ChatHistoryItem[] {
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]));
  const history: ChatHistoryItem[] = [];
  for (const m of messages) {
    if (m.role === 'system') history.push({ type: 'system', text: m.content });
    else if (m.role === 'user') history.push({ type: 'user', text: m.content });
    else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c) => ({
        type: 'functionCall' as const,
        name: c.name,
        params: parseJson(c.arguments),
        result: parseJson(results.get(c.id) ?? ''),
      }));
      history.push({ type: 'model', response: [...(m.content ? [m.content] : []), ...calls] });
    }
  }
  history.push({ type: 'model', response: partial ? [partial] : [] });
  return history;
}

export type SamplingOptions = Pick<
  SequenceEvaluateOptions,
  'temperature' | 'topP' | 'topK' | 'minP' | 'seed' | 'repeatPenalty'
>;

/**
 * OpenAI sampling → node-llama-cpp's per-token sampler options. Unset fields get
 * OpenAI's neutral values, not node-llama-cpp's defaults (topK 40, topP 0.95).
 * `recentTokens` supplies the last tokens of the sequence for repetition penalties.
 */
export function toSamplingOptions(sampling: Sampling, recentTokens: () => Token[]): SamplingOptions {
  const penalised =
    sampling.repeatPenalty !== undefined ||
    sampling.presencePenalty !== undefined ||
    sampling.frequencyPenalty !== undefined;
  return {
    temperature: sampling.temperature,
    topP: sampling.topP ?? 1,
    topK: sampling.topK !== undefined && sampling.topK > 0 ? sampling.topK : 0,
    minP: sampling.minP ?? 0,
    seed: sampling.seed,
    repeatPenalty: penalised
      ? {
          punishTokens: recentTokens,
          maxPunishTokens: PENALTY_WINDOW,
          penalty: sampling.repeatPenalty ?? 1,
          presencePenalty: sampling.presencePenalty ?? 0,
          frequencyPenalty: sampling.frequencyPenalty ?? 0,
        }
      : undefined,
  };
}
