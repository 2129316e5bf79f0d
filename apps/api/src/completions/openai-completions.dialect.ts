import type { CompletionChunk } from '@conveyor/openai';
import { RequestProblem } from '@conveyor/protocol';
import type { StreamingDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI, OPENAI_CHUNKS } from '../dialects/openai.dialect.js';
import { generationLine } from '../generation/generation-line.js';
import { parseCompletionBody } from './completion-body.parser.js';
import { toCompletion } from './completion-response.mapper.js';

/** OpenAI's legacy completions (`/v1/completions`, the hosted form, batch lines): checks, job and reply. */
export const openAiCompletions: StreamingDialect<CompletionChunk> = {
  ...OPENAI,
  name: 'openai-completions',
  idPrefix: 'cmpl-',
  route: '/v1/completions',
  operation: 'text_completion',
  framing: OPENAI_CHUNKS,
  parse(body) {
    const dto = parseCompletionBody(body);
    const line = generationLine(dto);
    return {
      ...line,
      check: (deployment, images) => {
        line.check(deployment, images);
        // A line's response is built from the worker's result alone, which does not carry the prompt back.
        if (dto.echo === true) throw RequestProblem.unsupported('echo in a batch line', 'echo');
      },
    };
  },
  toResponse: (who, reply) => toCompletion(who, reply),
  batchResults: OPENAI_BATCH_RESULTS,
};
