import type { ChatTurn, ToolSpec } from './generation-job.js';
import type { JobTerms } from './service-tiers.js';

export const TOKENIZE_JOB = 'tokenize' as const;

/** What a tokenize job turns into tokens, or back into text. */
export type TokenizeInput =
  /** Chat turns, rendered with the model's own template (and its tool definitions) as a generation would render them. */
  | { kind: 'chat'; messages: ChatTurn[]; tools?: ToolSpec[] }
  /** Text as it is, no template; `addSpecialTokens`: with the tokens the tokenizer adds (BOS). */
  | { kind: 'text'; text: string; addSpecialTokens: boolean }
  /** Token ids, turned back into text. */
  | { kind: 'detokenize'; tokens: number[] };

/**
 * Payload of one tokenize request (`/v1/messages/count_tokens`, `/tokenize`, `/detokenize`): answered
 * by a worker of the deployment, whose tokenizer and chat template are the ones its generations use.
 * Its answer is one `tokens` event.
 */
export interface TokenizeJobData extends JobTerms {
  requestId: string;
  deployment: string;
  /** The model name the client sent, where it is an alias of `deployment`: what the reply's `model` says. */
  model?: string;
  tokenize: TokenizeInput;
  enqueuedAt: number;
  /** Name of the API key that made the request, as on a generation job. */
  owner?: string;
  /** The API replica that relays the answer, as on a generation job. */
  replyTo?: string;
  /** Never a batch line. */
  batch?: undefined;
}

export const isTokenizeJob = (job: object): job is TokenizeJobData => 'tokenize' in job;
