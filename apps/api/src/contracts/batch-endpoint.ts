import type { DeploymentConfig } from '@conveyor/config';
import {
  BATCH_ENDPOINT_URLS,
  type BatchOutputLine,
  type ErrorCode,
  type MessageBatchIndividualResponse,
} from '@conveyor/openai';
import type { BatchLineResult, EmbedJobData, GenerationJobData, LineView, ReplyResult } from '@conveyor/queue';
import type { DecodedImage, ImageLimits } from '@conveyor/protocol';
import { MESSAGES_URL, type RunnerEndpointUrl } from '../repositories/batch-record.js';
import type { ReplyIdentity } from './reply-run.js';
import type { SurfaceRoute } from './surface-route.js';

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

/** A line of a batch's result files: OpenAI's output or error line, or Anthropic's result line. */
export type BatchResultLine = BatchOutputLine | MessageBatchIndividualResponse;

/** Why a line never ran. */
export type NotRunCode = typeof ErrorCode.batchCancelled | typeof ErrorCode.batchExpired;

/**
 * How one family of batches (OpenAI's Batches API, Anthropic's Message Batches) writes each request's
 * result to its files, the success line and the error lines alike; the result writer asks the route's
 * declared family rather than telling batches apart. `batchId` makes a line's id, where the family has
 * one, the same whenever it is written again.
 */
export interface BatchResultDialect {
  /** A request that finished; `response` is its body as the route answers it. */
  succeeded(batchId: string, result: Extract<BatchLineResult, { ok: true }>, response: unknown): BatchResultLine;
  /** A request that failed, with the status, code and message its synchronous route would have answered. */
  failed(batchId: string, result: Extract<BatchLineResult, { ok: false }>): BatchResultLine;
  /** A request that never ran: the batch was cancelled or expired first. */
  notRun(batchId: string, customId: string, code: NotRunCode): BatchResultLine;
  /** A request whose job was lost more than once, so the batch ends with every custom_id accounted for. */
  lost(batchId: string, customId: string): BatchResultLine;
}

/** What a batch needs of the route its lines go to (its route and reply ids among them); each route that batches run implements it. */
export interface BatchEndpoint extends SurfaceRoute {
  /** Validates a body as the synchronous route does; throws a RequestProblem naming the field. */
  parse(body: unknown): ParsedBatchBody;
  /** The response body of a line that finished; `view` is what its body's `view` said. */
  toResponse(who: ReplyIdentity, reply: ReplyResult, view: LineView): unknown;
  /** The result lines of the batches that run this route. */
  readonly batchResults: BatchResultDialect;
}

/** Every route a batch may run, by its URL. */
export type BatchEndpoints = Readonly<Record<RunnerEndpointUrl, BatchEndpoint>>;

/**
 * The routes batches may run, read from the surfaces that declare them: each route once, and every route
 * a batch may name among them, or the API does not start.
 */
export function batchEndpointsOf(surfaces: readonly BatchEndpoint[]): BatchEndpoints {
  const byRoute = new Map<RunnerEndpointUrl, BatchEndpoint>();
  for (const surface of surfaces) {
    if (byRoute.has(surface.route)) throw new Error(`Two surfaces declare the route ${surface.route}.`);
    byRoute.set(surface.route, surface);
  }
  const routes: readonly RunnerEndpointUrl[] = [...BATCH_ENDPOINT_URLS, MESSAGES_URL];
  const missing = routes.filter((url) => !byRoute.has(url));
  if (missing.length) throw new Error(`No surface declares the batch route(s) ${missing.join(', ')}.`);
  return Object.fromEntries(byRoute) as BatchEndpoints;
}

/** Injection token of the BatchEndpoints the app module composes from the features. */
export const BATCH_ENDPOINTS = Symbol('BATCH_ENDPOINTS');
