import type { ChatCompletionChunk } from '@conveyor/openai';
import { ChatCompletionRequestDto } from '@conveyor/protocol';
import type { StreamingDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI, OPENAI_CHUNKS } from '../dialects/openai.dialect.js';
import { generationLine } from '../generation/generation-line.js';
import { parseRequest } from '../generation/parse-request.js';
import { toChatCompletion } from './chat-response.mapper.js';

/**
 * OpenAI's chat completions (`/v1/chat/completions`, the hosted forms, and batch lines over it): the
 * body's checks (its image limits included), its job, and its reply, whole or as chunks.
 */
export const openAiChat: StreamingDialect<ChatCompletionChunk> = {
  ...OPENAI,
  name: 'openai-chat',
  idPrefix: 'chatcmpl-',
  route: '/v1/chat/completions',
  operation: 'chat',
  framing: OPENAI_CHUNKS,
  parse(body) {
    return generationLine(parseRequest(ChatCompletionRequestDto, body));
  },
  toResponse: toChatCompletion,
  batchResults: OPENAI_BATCH_RESULTS,
};
