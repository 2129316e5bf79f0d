import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { EmbeddingList } from '@conveyor/openai';
import { EmbeddingRequestDto } from '@conveyor/protocol';
import { HttpGeneration } from '../generation/http-generation.js';
import { parseRequest } from '../generation/parse-request.js';
import { EmbeddingsService } from './embeddings.service.js';

/** The HTTP shape of an embeddings request, shared by the plain and the org/app route. */
@Injectable()
export class EmbeddingsHttpHandler {
  constructor(
    private readonly embeddings: EmbeddingsService,
    private readonly http: HttpGeneration,
  ) {}

  /** `caller`: the name of the API key the request came with. */
  async handle(
    body: unknown,
    caller: string,
    reply: FastifyReply,
    onlyDeployment?: DeploymentConfig,
  ): Promise<EmbeddingList> {
    const { dto, signal, identify } = this.http.accept(reply, () => parseRequest(EmbeddingRequestDto, body));
    // A client that leaves stops the job: nobody is left to receive the vectors.
    const result = await this.embeddings.create(dto, caller, signal, onlyDeployment);
    identify(result.requestId, result.headers);
    return result.body;
  }
}
