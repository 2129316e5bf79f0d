import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { DetokenizeResponse, TokenizeResponse } from '@conveyor/openai';
import { DetokenizeRequestDto, TokenizeRequestDto } from '@conveyor/protocol';
import { GenerationService } from '../generation/generation.service.js';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import { TokenizeService } from '../generation/tokenize.service.js';

/** vLLM's /tokenize and /detokenize, answered by a worker of the deployment named; shared by the plain and org/app forms. */
@Injectable()
export class TokenizeHttpHandler {
  constructor(
    private readonly generation: GenerationService,
    private readonly tokenizer: TokenizeService,
    private readonly http: HttpGeneration,
  ) {}

  async tokenize(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    only?: DeploymentConfig,
  ): Promise<TokenizeResponse> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(TokenizeRequestDto, body));
    const deployment = this.generation.deploymentFor(dto.model, only);
    dto.check(deployment);
    const { requestId, tokenized } = await this.tokenizer.run(deployment, dto.toInput(), caller, signal);
    identify(requestId);
    return { tokens: tokenized.tokens, count: tokenized.tokens.length, max_model_len: tokenized.maxModelLen };
  }

  async detokenize(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    only?: DeploymentConfig,
  ): Promise<DetokenizeResponse> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(DetokenizeRequestDto, body));
    const deployment = this.generation.deploymentFor(dto.model, only);
    dto.check(deployment);
    const { requestId, tokenized } = await this.tokenizer.run(deployment, dto.toInput(), caller, signal);
    identify(requestId);
    return { prompt: tokenized.text ?? '' };
  }
}
