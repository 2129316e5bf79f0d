import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DrainService } from '../platform/drain.service.js';
import { abortOnDisconnect } from './abort-on-disconnect.js';
import { clientDeadlineMs } from './client-deadline.js';

/** A generation request taken in over HTTP, whatever API format its body speaks. */
export interface HttpGenerationCall<T> {
  /** The parsed body. */
  readonly dto: T;
  /** Fires when the client goes away before its reply is finished: the request's job is stopped. */
  readonly signal: AbortSignal;
  /**
   * Names the request's job in `x-request-id`, for the client to quote, with the headers its admission
   * decided (a run's `headers`); before any of the reply is sent.
   */
  identify(requestId: string, headers?: Record<string, string>): void;
  /** The deadline the request's headers set (ms from receipt), null when none; a reopened stream has none. */
  readonly deadlineMs: number | null;
}

/**
 * What every HTTP route that runs a generation does around its use case, whichever API's shape it
 * answers in: refuse at once while this replica drains, parse the body (a problem is answered as a
 * 400 naming the field), read the deadline its headers set, tie the request to the client's
 * connection, and name its job in the reply.
 */
@Injectable()
export class HttpGeneration {
  constructor(private readonly drain: DrainService) {}

  /** `parse`: reads the format's body; none for a request that has none (a reply's stream reopened). */
  accept(reply: FastifyReply): HttpGenerationCall<undefined>;
  accept<T>(reply: FastifyReply, parse: () => T): HttpGenerationCall<T>;
  accept<T>(reply: FastifyReply, parse?: () => T): HttpGenerationCall<T | undefined> {
    this.drain.assertAccepting();
    const dto = parse?.();
    const signal = abortOnDisconnect(reply);
    return {
      dto,
      signal,
      deadlineMs: parse ? clientDeadlineMs(reply.request.headers) : null,
      identify: (requestId, headers = {}) => void reply.headers({ ...headers, 'x-request-id': requestId }),
    };
  }
}
