import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ScoreResponse } from '@conveyor/openai';
import { ScoreRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import { openAiScore } from './openai-score.dialect.js';
import { ScoreService } from './score.service.js';

/** vLLM's score route, for deployments with `task: rerank`. */
@Controller()
@UseAuthScheme('Bearer')
@Speaks(openAiScore)
export class ScoreController {
  constructor(
    private readonly scores: ScoreService,
    private readonly http: HttpGeneration,
  ) {}

  @Post(openAiScore.route)
  @HttpCode(200)
  @ApiRoute('Score text pairs with a cross-encoder (deployments with task: rerank)', {
    auth: 'Bearer',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ScoreRequestDto)
  @ApiJsonOk("Each pair's score, in the order of text_2")
  async create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ScoreResponse> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(ScoreRequestDto, body));
    // A client that leaves stops the job: nobody is left to receive the scores.
    const result = await this.scores.score(dto, caller, signal);
    identify(result.requestId, result.headers);
    return result.body;
  }
}
