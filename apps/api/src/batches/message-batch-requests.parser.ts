import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { ImageLimits } from '@conveyor/protocol';
import { isObject } from '@conveyor/structured';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { BatchEndpoint } from '../contracts/batch-endpoint.js';
import { JsonArrayReader, JsonBodyError } from '../http/json-array.reader.js';
import { unsupportedMediaType } from '../http/request-checks.js';
import type { BodyStream } from '../http/streamed-body.js';
import { checkBatchBody } from './batch-line.parser.js';
import { DigestTable } from './digest-table.js';

/** Anthropic's rule for a request's custom_id. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * The most time checking requests holds the event loop before letting other work run: a batch of
 * 100,000 takes seconds to check, and /health (a liveness probe) must still be answered meanwhile.
 */
const SLICE_MS = 20;
/** The body's fields besides `requests` (`fold_repeats`, and each request's place as `0,`) are small. */
const SKELETON_BASE_BYTES = 64 * 1024;
/** A refusal before the body is read through: the rest of it is not read, so the connection closes. */
const CLOSE = { connection: 'close' };

/** A request of a Message Batch, checked. */
export interface MessageBatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

/** What the body said besides its requests, known once it is read to its end. */
export interface MessageBatchFields {
  count: number;
  foldRepeats: boolean;
}

/**
 * A Message Batch's body, read as it arrives (up to Anthropic's 256 MB and 100,000 requests), each
 * request checked as it comes: each custom_id Anthropic's form and used once, each params a body
 * `/v1/messages` takes (its model deployed here). The first problem is a 400 naming the request and
 * field; a body past the byte limit a 413. One request at a time is held, never the whole body.
 */
export class MessageBatchRequests {
  private fields: MessageBatchFields | null = null;

  constructor(
    private readonly body: BodyStream,
    private readonly limits: PlatformConfig['batch']['messageBatch'],
    private readonly endpoint: BatchEndpoint,
    private readonly findDeployment: (model: string) => DeploymentConfig | undefined,
    private readonly images: ImageLimits,
  ) {}

  /** The body's other fields; once `read()` has run to its end. */
  get rest(): MessageBatchFields {
    if (!this.fields) throw new Error('the message batch body has not been read to its end');
    return this.fields;
  }

  async *read(): AsyncGenerator<MessageBatchRequest> {
    const { contentType, declaredBytes } = this.body;
    if (contentType !== undefined && !/^\s*application\/json\s*(;|$)/i.test(contentType)) {
      throw withClose(unsupportedMediaType(contentType));
    }
    if (declaredBytes !== null && declaredBytes > this.limits.maxBytes) throw this.tooLarge();
    const reader = new JsonArrayReader('requests', {
      maxSkeletonBytes: SKELETON_BASE_BYTES + 2 * this.limits.maxRequests,
    });
    const seen = new DigestTable();
    let count = 0;
    let sliceStart = performance.now();
    try {
      for await (const request of reader.members(this.bytes())) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        if (++count > this.limits.maxRequests) {
          throw OpenAiHttpError.invalidRequest(
            `The batch has more than ${this.limits.maxRequests} requests; a batch may have at most ${this.limits.maxRequests}.`,
            'requests',
          );
        }
        yield this.check(request, count - 1, seen);
      }
    } catch (err) {
      if (err instanceof JsonBodyError)
        throw withClose(OpenAiHttpError.invalidRequest(err.message, null, ErrorCode.invalidJson));
      if (err instanceof OpenAiHttpError) throw withClose(err);
      throw err;
    }
    const { fields, present } = reader.rest();
    if (!fields || !present || !Array.isArray(fields.requests) || fields.requests.length !== count || count === 0) {
      throw OpenAiHttpError.invalidRequest('requests must be a non-empty array of {custom_id, params}.', 'requests');
    }
    // Conveyor's extension, as on OpenAI's batches: false runs every request, repeats too.
    this.fields = { count, foldRepeats: fields.fold_repeats !== false };
  }

  /** The body's bytes, refused past the limit (a body sent chunked declares no length). */
  private async *bytes(): AsyncGenerator<Buffer> {
    let received = 0;
    for await (const chunk of this.body.stream as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > this.limits.maxBytes) throw this.tooLarge();
      yield chunk;
    }
  }

  private tooLarge(): OpenAiHttpError {
    return withClose(
      OpenAiHttpError.refusal(
        413,
        `A message batch's body may be at most ${this.limits.maxBytes} bytes.`,
        ErrorCode.requestTooLarge,
      ),
    );
  }

  private check(request: unknown, i: number, seen: DigestTable): MessageBatchRequest {
    const at = `requests[${i}]`;
    if (!isObject(request)) throw OpenAiHttpError.invalidRequest('each request must be an object.', at);
    const { custom_id, params } = request;
    if (typeof custom_id !== 'string' || !CUSTOM_ID.test(custom_id)) {
      throw OpenAiHttpError.invalidRequest(
        'custom_id must be 1 to 64 letters, digits, underscores or dashes.',
        `${at}.custom_id`,
      );
    }
    if (seen.setIfAbsent(custom_id, i) !== undefined) {
      throw OpenAiHttpError.invalidRequest(
        `custom_id '${custom_id}' is used by more than one request.`,
        `${at}.custom_id`,
        ErrorCode.duplicateCustomId,
      );
    }
    if (!isObject(params)) throw OpenAiHttpError.invalidRequest('params must be a Messages body.', `${at}.params`);
    const result = checkBatchBody(params, this.endpoint, this.findDeployment, this.images);
    if (!result.ok) {
      throw OpenAiHttpError.invalidRequest(
        result.message,
        result.param ? `${at}.params.${result.param}` : `${at}.params`,
        result.code,
      );
    }
    return { custom_id, params };
  }
}

const withClose = (err: OpenAiHttpError): OpenAiHttpError =>
  new OpenAiHttpError(err.status, err.type, err.message, err.param, err.code, { ...err.headers, ...CLOSE });
