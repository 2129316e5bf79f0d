import type { ResponseStreamEvent } from '@conveyor/openai';
import { RequestProblem, ResponseRequestDto } from '@conveyor/protocol';
import type { StreamingDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI } from '../dialects/openai.dialect.js';
import { generationLine } from '../generation/generation-line.js';
import { parseRequest } from '../generation/parse-request.js';
import { DEFAULT_ECHO, RESPONSE_ID_PREFIX } from './response.mapper.js';
import { toResponseObject } from './response-events.mapper.js';

/**
 * OpenAI's Responses API (`/v1/responses`, the hosted form, batch lines). Its stream names each event
 * by its type and has no `[DONE]`; a failure once open is the formatter's `response.failed`. A batch
 * line is not stored, and stands alone: it cannot continue a stored response or run in the background.
 */
export const openAiResponses: StreamingDialect<ResponseStreamEvent> = {
  ...OPENAI,
  name: 'openai-responses',
  idPrefix: RESPONSE_ID_PREFIX,
  route: '/v1/responses',
  operation: 'chat',
  framing: {
    eventName: (event) => event.type,
    error: (err) => ({ body: err.toBody() }),
    done: false,
  },
  parse(body) {
    const dto = parseRequest(ResponseRequestDto, body);
    if (dto.previous_response_id)
      throw RequestProblem.unsupported('previous_response_id in a batch', 'previous_response_id');
    if (dto.background) throw RequestProblem.unsupported('background in a batch', 'background');
    return generationLine(dto);
  },
  toResponse: (who, reply) => toResponseObject(who, reply, DEFAULT_ECHO),
  batchResults: OPENAI_BATCH_RESULTS,
};
