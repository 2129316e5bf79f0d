import { ErrorCode } from '@conveyor/openai';

/**
 * A well-formed request this deployment cannot honour (a field out of range for it, an
 * unsupported combination): thrown by a body's checks, answered as a 400 naming `param`, or
 * with `status` where another fits better (413 for an image over its size limit).
 */
export class RequestProblem extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: ErrorCode | null = null,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
    this.name = 'RequestProblem';
  }

  /** A feature this server does not implement, named by the field that asks for it. */
  static unsupported(feature: string, param: string): RequestProblem {
    return new RequestProblem(`${feature} is not supported by this server yet.`, param, ErrorCode.unsupportedParameter);
  }
}
