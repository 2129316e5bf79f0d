import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { EmbeddingList } from '@conveyor/openai';
import { EmbeddingRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { EmbeddingsHttpHandler } from './embeddings-http.handler.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { openAiEmbeddings } from './openai-embeddings.dialect.js';

/** OpenAI's route, as local servers and serverless GPU clouds expose it. */
@Controller()
@UseAuthScheme('Bearer')
@Speaks(openAiEmbeddings)
export class EmbeddingsController {
  constructor(private readonly http: EmbeddingsHttpHandler) {}

  @Post(openAiEmbeddings.route)
  @HttpCode(200)
  @ApiRoute('Embeddings (deployments with task: embeddings)', {
    auth: 'Bearer',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(EmbeddingRequestDto)
  @ApiJsonOk('A list of embeddings')
  create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EmbeddingList> {
    return this.http.handle(body, caller, reply);
  }
}
