import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dialectOf } from '../dialects/speaks.decorator.js';
import { toOpenAiError } from '../errors/to-openai-error.js';

/** Every error a route raises (auth, parsing, the route), in the shape of the dialect the route speaks. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = toOpenAiError(exception);
    if (error.status >= 500 && error.status !== 503 && error.status !== 504) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    // A hijacked (streaming) reply has already sent its status; the stream writer reports its own errors.
    if (reply.sent || reply.raw.headersSent) return;
    const { status, body, headers } = dialectOf(host.switchToHttp().getRequest<FastifyRequest>()).error(error);
    // Always JSON, whatever the route had set for its own answer (the metrics' text, a file's bytes).
    void reply.status(status).headers(headers).type('application/json; charset=utf-8').send(body);
  }
}
