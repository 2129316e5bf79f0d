import type { BatchLineRef } from './batch.js';
import type { GenerationJobData } from './generation-job.js';

export const EMBED_JOB = 'embed' as const;

/** Payload of one embeddings request: every input is embedded, in order, and published as `embedding` events. */
export interface EmbedJobData {
  requestId: string;
  deployment: string;
  /** Text, or text already tokenized (token ids). */
  inputs: Array<string | number[]>;
  enqueuedAt: number;
  /** Name of the API key that made the request, as on a generation job. */
  owner?: string;
  /** The API replica that relays the reply, as on a generation job. */
  replyTo?: string;
  /** Set when the job is a batch line. */
  batch?: BatchLineRef;
}

/** Any job the API puts on a deployment's queue. */
export type QueuedJobData = GenerationJobData | EmbedJobData;

export const isEmbedJob = (job: QueuedJobData): job is EmbedJobData => 'inputs' in job;
