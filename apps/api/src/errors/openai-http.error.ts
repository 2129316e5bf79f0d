import { ErrorCode, errorTypeFor, type OpenAiErrorBody, type OpenAiErrorType } from '@conveyor/openai';

/**
 * An error raised while serving a request, in OpenAI's terms (status, type, param, code): the neutral
 * form every dialect shapes for its clients (`Dialect.error`); `toBody` is OpenAI's own shape.
 */
export class OpenAiHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: OpenAiErrorType,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'OpenAiHttpError';
  }

  toBody(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /** A refusal that names no field: its type follows from its status. */
  static refusal(status: number, message: string, code: string | null): OpenAiHttpError {
    return new OpenAiHttpError(status, errorTypeFor(status), message, null, code);
  }

  static invalidRequest(message: string, param: string | null = null, code: string | null = null): OpenAiHttpError {
    return new OpenAiHttpError(400, 'invalid_request_error', message, param, code);
  }

  static unsupported(feature: string, param: string): OpenAiHttpError {
    return new OpenAiHttpError(
      400,
      'invalid_request_error',
      `${feature} is not supported by this server yet.`,
      param,
      ErrorCode.unsupportedParameter,
    );
  }

  static modelNotFound(model: string): OpenAiHttpError {
    return new OpenAiHttpError(
      404,
      'invalid_request_error',
      `The model '${model}' does not exist or is not deployed here.`,
      'model',
      ErrorCode.modelNotFound,
    );
  }

  static timeout(ms: number): OpenAiHttpError {
    return new OpenAiHttpError(
      504,
      'server_error',
      `The request did not complete within ${ms} ms and was cancelled.`,
      null,
      ErrorCode.timeout,
    );
  }

  /**
   * A request's own deadline passed: 504, as the server (the gateway to its workers) did not answer in the
   * time the client gave it; not 408, which says the client was slow to send its request, and which SDKs
   * retry. `x-should-retry: false` tells the OpenAI and Anthropic SDKs not to spend another try on it.
   */
  static deadlineExceeded(deadlineMs: number, queuedMs: number, ranMs: number | null): OpenAiHttpError {
    const where =
      ranMs === null
        ? `after ${queuedMs} ms in the queue, before any worker took it; it was withdrawn from the queue`
        : `after ${queuedMs} ms in the queue and ${ranMs} ms generating; it was stopped`;
    return new OpenAiHttpError(
      504,
      'server_error',
      `The request's deadline of ${deadlineMs} ms passed ${where}.`,
      null,
      ErrorCode.deadlineExceeded,
      { 'x-should-retry': 'false' },
    );
  }

  static serverError(message: string, code: string): OpenAiHttpError {
    return new OpenAiHttpError(500, 'server_error', message, null, code);
  }

  /** Redis, and with it the queue, does not answer: refused at once rather than left waiting on a connection. */
  static queueUnreachable(): OpenAiHttpError {
    return OpenAiHttpError.unavailable('The queue is unreachable; try again shortly.');
  }

  static unavailable(message: string): OpenAiHttpError {
    // A 503 always says when to try again, as a 429 does.
    return new OpenAiHttpError(503, 'service_unavailable', message, null, ErrorCode.serviceUnavailable, {
      'retry-after': '1',
    });
  }
}
