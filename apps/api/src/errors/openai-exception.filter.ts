import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { toOpenAiError } from './to-openai-error.js';

@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = toOpenAiError(exception);
    if (error.status >= 500 && error.status !== 503 && error.status !== 504) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    // A hijacked (streaming) reply has already sent its status; the stream writer reports its own errors.
    if (reply.sent || reply.raw.headersSent) return;
    void reply.status(error.status).headers(error.headers).send(error.toBody());
  }
}
