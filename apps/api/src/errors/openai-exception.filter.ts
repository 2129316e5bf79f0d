import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { speaksMessages, toMessagesError } from './messages-error.js';
import { toOpenAiError } from './to-openai-error.js';

/** Every error a route raises, in the shape of the API the route speaks: OpenAI's, or Anthropic's on its routes. */
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
    // Anthropic's routes answer in Anthropic's error shape, whatever raised the error (auth, parsing, the route).
    if (speaksMessages(host.switchToHttp().getRequest<FastifyRequest>().url)) {
      const { status, body, headers } = toMessagesError(error);
      void reply.status(status).headers(headers).send(body);
      return;
    }
    void reply.status(error.status).headers(error.headers).send(error.toBody());
  }
}
