import type { BatchLineRef } from './batch.js';

/** A chat turn after the API has normalised it: roles folded, text parts joined. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Sampling as the engine applies it; an absent field means the engine's neutral value. */
export interface Sampling {
  temperature: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repeatPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  /** Never end on an end-of-generation token: replies run to max_tokens (benchmarks, load tests). */
  ignoreEos?: boolean;
}

export const CHAT_JOB = 'chat' as const;

/** Payload of one chat job. Carries no credentials: keys never reach Redis. */
export interface ChatJobData {
  requestId: string;
  deployment: string;
  messages: ChatTurn[];
  sampling: Sampling;
  maxTokens?: number;
  stop: string[];
  enqueuedAt: number;
  /** Set when the job is a batch line. */
  batch?: BatchLineRef;
}

export type FinishReason = 'stop' | 'length';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** What the processor returns to BullMQ once the reply is fully published. */
export interface ChatJobResult {
  finishReason: FinishReason;
  usage: TokenUsage;
}
