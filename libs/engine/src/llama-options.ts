import type { ChatHistoryItem, SequenceEvaluateOptions, Token } from 'node-llama-cpp';
import type { ChatTurn, Sampling } from '@conveyor/queue';

/** How far back repetition penalties look, as llama.cpp's server does by default. */
export const PENALTY_WINDOW = 64;

/** OpenAI messages → node-llama-cpp history, ending in the model turn to be generated (or continued from `partial`). */
export function toChatHistory(messages: readonly ChatTurn[], partial = ''): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m): ChatHistoryItem => {
    switch (m.role) {
      case 'system':
        return { type: 'system', text: m.content };
      case 'user':
        return { type: 'user', text: m.content };
      case 'assistant':
        return { type: 'model', response: [m.content] };
    }
  });
  history.push({ type: 'model', response: partial ? [partial] : [] });
  return history;
}

export type SamplingOptions = Pick<SequenceEvaluateOptions, 'temperature' | 'topP' | 'topK' | 'minP' | 'seed' | 'repeatPenalty'>;

/**
 * OpenAI sampling → node-llama-cpp's per-token sampler options. Unset fields get
 * OpenAI's neutral values, not node-llama-cpp's defaults (topK 40, topP 0.95).
 * `recentTokens` supplies the last tokens of the sequence for repetition penalties.
 */
export function toSamplingOptions(sampling: Sampling, recentTokens: () => Token[]): SamplingOptions {
  const penalised =
    sampling.repeatPenalty !== undefined || sampling.presencePenalty !== undefined || sampling.frequencyPenalty !== undefined;
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
