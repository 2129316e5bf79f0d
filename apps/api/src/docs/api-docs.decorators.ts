import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import type { AuthScheme } from '../auth/auth-scheme.decorator.js';

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: the error names the field in `param`',
  401: 'Missing or wrong credentials',
  403: 'Not allowed: a key from configuration cannot be changed through the admin routes',
  404: "Unknown model, app, file, batch or reply (or another key's)",
  409: 'Conflict: the name is taken (API keys); on Anthropic routes, the message batch is not in a state that allows it (still processing, or ended)',
  413: 'Body or file too large',
  416: 'The Range header names no byte of the file; Content-Range gives its size',
  429: 'Rate limit or queue depth exceeded; see Retry-After',
  503: 'No worker took the request in time, Redis is unreachable, or the server is shutting down',
  504: 'The request deadline passed; the job was cancelled',
  529: 'Anthropic routes: the queue is full or the platform cannot take the request now; retry shortly',
};

/** The security scheme each route family uses, as the document names it. */
const SCHEME_NAMES: Record<AuthScheme, string> = { Bearer: 'bearer', 'Api-Key': 'apiKey', Key: 'apiKey' };

/** The OpenAI-shaped errors a route answers with, by status. */
export const ApiErrors = (...statuses: number[]) =>
  applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: ERROR_TEXT[status], schema: { $ref: '#/components/schemas/Error' } }),
    ),
  );

/** A route's summary, credentials and error answers in one place. */
export const ApiRoute = (summary: string, options: { auth?: AuthScheme; errors?: number[] } = {}) =>
  applyDecorators(
    ApiOperation({ summary }),
    ...(options.auth ? [ApiSecurity(SCHEME_NAMES[options.auth])] : []),
    ApiErrors(...(options.errors ?? [])),
  );

/** A JSON body validated against `dto` (the handler parses it itself, so Nest does not see its type). */
export const ApiJsonBody = (dto: Type<unknown>) => ApiBody({ type: dto, required: true });

/** A generating route's answer: one JSON object, or Server-Sent Events when `stream` is true. */
export const ApiJsonOrEvents = (object: string) =>
  applyDecorators(
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description:
        object === 'message'
          ? "A message, or with `stream: true` Anthropic's Server-Sent Events (`event: <type>`, `id: <n>`, " +
            '`data: <event>`), from `message_start` to `message_stop`'
          : `A ${object}, or with \`stream: true\` Server-Sent Events: \`data: <chunk>\` lines ` +
            '(chat chunks also carry `id: <n>`), closed by `data: [DONE]`',
      schema: { type: 'object' },
    }),
  );

/** A Responses API answer: a response object, or its named, numbered events when `stream` is true. */
export const ApiResponseOrEvents = () =>
  applyDecorators(
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description:
        'A response, or with `stream: true` Server-Sent Events (`event: <type>`, `id: <sequence_number>`, ' +
        '`data: <event>`) from response.created to response.completed',
      schema: { type: 'object' },
    }),
  );

/** A plain JSON answer described in words: the wire types are interfaces, which the document cannot read. */
export const ApiJsonOk = (description: string) => ApiOkResponse({ description, schema: { type: 'object' } });
