import type { DeploymentConfig } from '@conveyor/config';
import type { EmbedJobData, GenerationJobData, LineView, ReplyResult } from '@conveyor/queue';
import type { DecodedImage, ImageLimits } from '@conveyor/protocol';
import type { RunnerEndpointUrl } from '../repositories/batch-record.js';
import type { ReplyIdentity } from './reply-run.js';

/** A batch line's body once it has passed every check of its synchronous route's body validation. */
export interface ParsedBatchBody {
  model: string;
  /** The checks that need the deployment (what it serves) and the image limits; throws a RequestProblem naming the field. */
  check(deployment: DeploymentConfig, images: ImageLimits): void;
  toJob(requestId: string, deployment: DeploymentConfig): GenerationJobData | EmbedJobData;
  /** The images `check` decoded, which the job refers to (bodies that carry none need not say). */
  images?(): readonly DecodedImage[];
  /** What the response shows that only the request says (bodies whose response depends on nothing else need not say). */
  view?(): LineView;
}

/** What a batch needs of the route its lines go to; each route that batches run implements it. */
export interface BatchEndpoint {
  /** Validates a body as the synchronous route does; throws a RequestProblem naming the field. */
  parse(body: unknown): ParsedBatchBody;
  /** Prefix of the response id, as the synchronous route makes it. */
  idPrefix: string;
  /** The response body of a line that finished; `view` is what its body's `view` said. */
  toResponse(who: ReplyIdentity, reply: ReplyResult, view: LineView): unknown;
}

/** Every route a batch may run, by its URL. */
export type BatchEndpoints = Readonly<Record<RunnerEndpointUrl, BatchEndpoint>>;

/** Injection token of the BatchEndpoints the app module composes from the features. */
export const BATCH_ENDPOINTS = Symbol('BATCH_ENDPOINTS');
