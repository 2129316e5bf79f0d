import { openAiChat } from './chat/openai-chat.dialect.js';
import { openAiCompletions } from './completions/openai-completions.dialect.js';
import { openAiEmbeddings } from './embeddings/openai-embeddings.dialect.js';
import { anthropicMessages } from './messages/anthropic-messages.dialect.js';
import { openAiResponses } from './responses/openai-responses.dialect.js';
import { openAiRerank } from './rerank/openai-rerank.dialect.js';
import { openAiScore } from './score/openai-score.dialect.js';

/**
 * The generating API surfaces, each declared once by its own feature's dialect (route, reply ids, GenAI
 * operation, request class, reply and batch result lines). The routes batches may run are read from
 * here; Anthropic's Message Batches (/v1/messages/batches) run their requests as lines of /v1/messages.
 */
export const SURFACES = [
  openAiChat,
  openAiCompletions,
  openAiEmbeddings,
  openAiRerank,
  openAiResponses,
  openAiScore,
  anthropicMessages,
] as const;
