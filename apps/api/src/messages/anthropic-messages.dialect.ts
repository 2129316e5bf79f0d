import type { MessageStreamEvent } from '@conveyor/openai';
import { MessagesRequestDto, RequestProblem } from '@conveyor/protocol';
import { ANTHROPIC_BATCH_RESULTS } from '../dialects/anthropic-batch.dialect.js';
import { ANTHROPIC, ANTHROPIC_EVENTS } from '../dialects/anthropic.dialect.js';
import type { StreamingDialect } from '../dialects/dialect.js';
import { generationLine } from '../generation/generation-line.js';
import { parseRequest } from '../generation/parse-request.js';
import { toMessage } from './messages-response.mapper.js';

/**
 * Anthropic's Messages API (`/v1/messages`, the hosted form, and the requests of Message Batches). A
 * batch result is a whole message, so a request in one cannot ask to stream; whether the message holds
 * the reply's thought goes with the line, as the request's `thinking` says, and so does its max_tokens:
 * a reply cut short before it ran out of context.
 */
export const anthropicMessages: StreamingDialect<MessageStreamEvent> = {
  ...ANTHROPIC,
  name: 'anthropic-messages',
  idPrefix: 'msg_',
  route: '/v1/messages',
  operation: 'chat',
  framing: ANTHROPIC_EVENTS,
  parse(body) {
    const dto = parseRequest(MessagesRequestDto, body);
    if (dto.stream === true) {
      throw new RequestProblem('stream is not available in a batch: each result is a whole message.', 'stream');
    }
    return generationLine(dto, () => ({
      ...(dto.thinkingEnabled ? { thinking: true } : {}),
      maxTokens: dto.max_tokens,
    }));
  },
  toResponse: (who, reply, view) => toMessage(who, reply, view.thinking === true, view.maxTokens, 'batch'),
  batchResults: ANTHROPIC_BATCH_RESULTS,
};
