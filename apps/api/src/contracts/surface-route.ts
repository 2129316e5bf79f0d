import type { RunnerEndpointUrl } from '../repositories/batch-record.js';

/** OpenTelemetry's `gen_ai.operation.name` of a generating route (`rerank` and `score` are the platform's own: the conventions name neither). */
export type GenAiOperation = 'chat' | 'text_completion' | 'embeddings' | 'rerank' | 'score';

/**
 * Where a generating API surface is reached and how its replies are named and timed, declared once with
 * the surface's dialect: the pipeline, the metrics, usage and batches all read it from there.
 */
export interface SurfaceRoute {
  /** Its route: the one its requests arrive on and a batch line names. */
  readonly route: RunnerEndpointUrl;
  /** Prefix of its reply ids (`chatcmpl-`, `msg_`). */
  readonly idPrefix: string;
  readonly operation: GenAiOperation;
}

/** A job that is no model request (tokenizing): its reply is named, but not counted or timed as a generation. */
export interface UncountedJob {
  readonly idPrefix: string;
  readonly route: null;
  readonly operation: null;
}
