import type { BatchLineRef } from './batch.js';
import type { JobTerms } from './service-tiers.js';
import { GENERATE_JOB, type GenerationJobData } from './generation-job.js';
import { TOKENIZE_JOB, isTokenizeJob, type TokenizeJobData } from './tokenize-job.js';

export const EMBED_JOB = 'embed' as const;

/**
 * Payload of one embeddings request: every input is embedded, in order, and published as `embedding`
 * events. A rerank request is one too, with its `query`: each input is a document, scored against the
 * query, and its score published as a vector of one value (the reply's events are the same).
 */
export interface EmbedJobData extends JobTerms {
  requestId: string;
  deployment: string;
  /** The model name the client sent, where it is an alias of `deployment`: what the reply's `model` says. */
  model?: string;
  /** Text, or text already tokenized (token ids); a rerank job's documents, text only. */
  inputs: Array<string | number[]>;
  /**
   * Set on a rerank or score job: what its documents are scored against, one text for them all, or one
   * per document (a score request's pairs, `text_1[i]` with `text_2[i]`).
   */
  query?: string | string[];
  enqueuedAt: number;
  /** Name of the API key that made the request, as on a generation job. */
  owner?: string;
  /** The API replica that relays the reply, as on a generation job. */
  replyTo?: string;
  /** Set when the job is a batch line. */
  batch?: BatchLineRef;
}

/** Any job the API puts on a deployment's queue. */
export type QueuedJobData = GenerationJobData | EmbedJobData | TokenizeJobData;

export const isEmbedJob = (job: QueuedJobData): job is EmbedJobData => 'inputs' in job;

/** A chat or legacy-completion job: the only kind that has a prompt to route by, images, or a reply to continue. */
export const isGenerationJob = (job: QueuedJobData): job is GenerationJobData => 'sampling' in job;

/** The BullMQ job name a job is queued under: one queue per deployment carries every kind, routed by name. */
export const jobNameOf = (job: QueuedJobData): string =>
  isEmbedJob(job) ? EMBED_JOB : isTokenizeJob(job) ? TOKENIZE_JOB : GENERATE_JOB;
