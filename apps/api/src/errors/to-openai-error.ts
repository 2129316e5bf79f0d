import { HttpException } from '@nestjs/common';
import { FileNotFoundError, FileTooLargeError, InvalidFileIdError } from '@conveyor/batch-store';
import { ErrorCode, errorTypeFor } from '@conveyor/openai';
import { RequestProblem } from '@conveyor/protocol';
import { isRedisOutage } from '@conveyor/redis';
import { OpenAiHttpError } from './openai-http.error.js';

/** Fastify's own errors (bad JSON, body too large, bad content type) carry a 4xx statusCode and an FST_ code. */
interface FastifyLikeError {
  statusCode: number;
  code?: string;
  message: string;
}

const isFastifyError = (e: unknown): e is FastifyLikeError =>
  e instanceof Error && typeof (e as Partial<FastifyLikeError>).statusCode === 'number';

const FASTIFY_MESSAGES: Record<string, { message: string; code: ErrorCode }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: {
    message: 'We could not parse the JSON body of your request.',
    code: ErrorCode.invalidJson,
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    message: 'The request body is empty; expected a JSON object.',
    code: ErrorCode.invalidJson,
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { message: 'The request body is too large.', code: ErrorCode.requestTooLarge },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    message: 'The Content-Length header does not match the body.',
    code: ErrorCode.invalidContentLength,
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    message: 'Unsupported Content-Type; send application/json.',
    code: ErrorCode.unsupportedMediaType,
  },
};

/** Maps anything thrown while serving a request to the OpenAI error it should be shown as. */
export function toOpenAiError(error: unknown): OpenAiHttpError {
  if (error instanceof OpenAiHttpError) return error;
  if (error instanceof RequestProblem) {
    return new OpenAiHttpError(error.status, errorTypeFor(error.status), error.message, error.param, error.code);
  }
  if (error instanceof InvalidFileIdError) {
    return OpenAiHttpError.invalidRequest(error.message, 'file_id', ErrorCode.invalidFileId);
  }
  // Another key's file is reported exactly like a missing one.
  if (error instanceof FileNotFoundError) {
    return new OpenAiHttpError(404, 'not_found_error', error.message, 'file_id', ErrorCode.fileNotFound);
  }
  if (error instanceof FileTooLargeError) {
    return new OpenAiHttpError(413, 'invalid_request_error', error.message, 'file', ErrorCode.fileTooLarge);
  }
  // Nest wraps Fastify's body-parsing errors; the original carries the precise code.
  if (error instanceof HttpException && isFastifyError(error.cause)) return toOpenAiError(error.cause);
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const message = status === 404 ? 'Unknown route.' : error.message;
    return new OpenAiHttpError(
      status,
      errorTypeFor(status),
      message,
      null,
      status === 404 ? ErrorCode.unknownUrl : null,
    );
  }
  if (isFastifyError(error) && error.statusCode >= 400 && error.statusCode < 500) {
    const known = error.code ? FASTIFY_MESSAGES[error.code] : undefined;
    return new OpenAiHttpError(
      error.statusCode,
      errorTypeFor(error.statusCode),
      known?.message ?? error.message,
      null,
      known?.code ?? null,
    );
  }
  // Redis out of reach, on any route: the one answer the docs promise for it, however the route got there.
  if (isRedisOutage(error))
    return OpenAiHttpError.unavailable('The platform cannot reach Redis right now; try again shortly.');
  return new OpenAiHttpError(500, 'server_error', 'The server had an error while processing your request.', null, null);
}
