import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { RerankResponse } from '@conveyor/openai';
import { RerankRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import { openAiRerank } from './openai-rerank.dialect.js';
import { RerankService } from './rerank.service.js';

/** The rerank route llama.cpp's server and vLLM serve, for deployments with `task: rerank`. */
@Controller()
@UseAuthScheme('Bearer')
@Speaks(openAiRerank)
export class RerankController {
  constructor(
    private readonly rerank: RerankService,
    private readonly http: HttpGeneration,
  ) {}

  @Post(openAiRerank.route)
  @HttpCode(200)
  @ApiRoute('Rerank documents against a query (deployments with task: rerank)', {
    auth: 'Bearer',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(RerankRequestDto)
  @ApiJsonOk('The documents by relevance, best first')
  async create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RerankResponse> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(RerankRequestDto, body));
    // A client that leaves stops the job: nobody is left to receive the scores.
    const result = await this.rerank.rerank(dto, caller, signal);
    identify(result.requestId, result.headers);
    return result.body;
  }
}
