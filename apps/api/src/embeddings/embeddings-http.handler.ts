import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { EmbeddingList } from '@conveyor/openai';
import { DrainService } from '../platform/drain.service.js';
import { parseEmbeddingBody } from './embedding-request.parser.js';
import { EmbeddingsService } from './embeddings.service.js';

/** The HTTP shape of an embeddings request, shared by the plain and the org/app route. */
@Injectable()
export class EmbeddingsHttpHandler {
  constructor(
    private readonly embeddings: EmbeddingsService,
    private readonly drain: DrainService,
  ) {}

  async handle(body: unknown, reply: FastifyReply, onlyDeployment?: DeploymentConfig): Promise<EmbeddingList> {
    this.drain.assertAccepting();
    const dto = parseEmbeddingBody(body);
    // A client that leaves stops the job: nobody is left to receive the vectors.
    const gone = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    const result = await this.embeddings.create(dto, gone.signal, onlyDeployment);
    reply.header('x-request-id', result.requestId);
    return result.body;
  }
}
