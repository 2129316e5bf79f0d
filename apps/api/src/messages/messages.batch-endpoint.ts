import { MessagesRequestDto, RequestProblem, type ImageLimits } from '@conveyor/protocol';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';
import { parseRequest } from '../generation/parse-request.js';
import { toMessage } from './messages-response.mapper.js';
import { MESSAGE_ID_PREFIX } from './messages.service.js';

/**
 * The requests of Anthropic's Message Batches: the synchronous route's checks (its image limits
 * included), job and message. A result is a whole message, so a request cannot ask to stream; whether
 * the message holds the reply's thought goes with the line, as the request's `thinking` says.
 * Its max_tokens goes too: a reply cut short before it ran out of context.
 */
export const messagesBatchEndpoint = (images: ImageLimits): BatchEndpoint => ({
  idPrefix: MESSAGE_ID_PREFIX,
  parse(body) {
    const dto = parseRequest(MessagesRequestDto, body);
    if (dto.stream === true) {
      throw new RequestProblem('stream is not available in a batch: each result is a whole message.', 'stream');
    }
    return {
      model: dto.model,
      check: (deployment) => dto.check(deployment, images),
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
      images: () => dto.decodedImages(),
      view: () => ({ ...(dto.thinkingEnabled ? { thinking: true } : {}), maxTokens: dto.max_tokens }),
    };
  },
  toResponse: (who, reply, view) => toMessage(who, reply, view.thinking === true, view.maxTokens),
});
