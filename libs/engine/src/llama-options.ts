import type { ChatHistoryItem, LLamaChatGenerateResponseOptions } from 'node-llama-cpp';
import type { ChatTurn, FinishReason, Sampling } from '@conveyor/queue';

/** How far back repetition penalties look, as llama.cpp's server does by default. */
const PENALTY_WINDOW = 64;

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

type SamplingOptions = Pick<
  LLamaChatGenerateResponseOptions,
  'temperature' | 'topP' | 'topK' | 'minP' | 'seed' | 'repeatPenalty' | 'maxTokens' | 'customStopTriggers'
>;

/** OpenAI sampling → node-llama-cpp options. Unset fields stay unset so the engine's neutral values apply. */
export function toSamplingOptions(sampling: Sampling, maxTokens: number | undefined, stop: readonly string[]): SamplingOptions {
  const penalised =
    sampling.repeatPenalty !== undefined || sampling.presencePenalty !== undefined || sampling.frequencyPenalty !== undefined;
  return {
    temperature: sampling.temperature,
    // node-llama-cpp's own defaults (topK 40, topP 0.95) are not OpenAI's: neutral unless asked.
    topP: sampling.topP ?? 1,
    topK: sampling.topK !== undefined && sampling.topK > 0 ? sampling.topK : 0,
    minP: sampling.minP ?? 0,
    seed: sampling.seed,
    repeatPenalty: penalised
      ? {
          lastTokens: PENALTY_WINDOW,
          penalty: sampling.repeatPenalty ?? 1,
          presencePenalty: sampling.presencePenalty ?? 0,
          frequencyPenalty: sampling.frequencyPenalty ?? 0,
          penalizeNewLine: true,
        }
      : false,
    maxTokens,
    customStopTriggers: stop.length ? [...stop] : undefined,
  };
}

export function toFinishReason(stopReason: string): FinishReason {
  return stopReason === 'maxTokens' ? 'length' : 'stop';
}
