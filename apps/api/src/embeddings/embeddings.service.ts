import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode, type EmbeddingList } from '@conveyor/openai';
import type { EmbeddingRequestDto } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService } from '../generation/generation.service.js';
import { dimensionsOf, toEmbeddingList } from './embeddings-response.mapper.js';
import { openAiEmbeddings } from './openai-embeddings.dialect.js';

export interface EmbeddingsResult {
  requestId: string;
  body: EmbeddingList;
  /** What the HTTP reply says of the request's admission (see ReplyRun). */
  headers: Record<string, string>;
}

/** The embeddings use case: one job on the deployment's queue, its reply gathered whole. */
@Injectable()
export class EmbeddingsService {
  constructor(private readonly generation: GenerationService) {}

  /** `caller`: the API key's name, recorded as the job's owner; `only` binds the request to one deployment. */
  async create(
    dto: EmbeddingRequestDto,
    caller: string,
    signal: AbortSignal,
    only?: DeploymentConfig,
  ): Promise<EmbeddingsResult> {
    const deployment = this.generation.deploymentFor(dto.model, only);
    dto.check(deployment);
    const run = await this.generation.submit(
      deployment,
      (requestId, now) => dto.toJob(requestId, deployment, now),
      signal,
      {
        surface: openAiEmbeddings,
        model: dto.model,
        stream: false,
        prompt: dto.input,
        caller,
      },
    );
    const reply = await collectReply(run);
    // The API never loads the model, so its width is only known from a reply; a model cannot change it.
    const width = dimensionsOf(reply);
    if (dto.dimensions != null && width !== null && dto.dimensions !== width) {
      throw new OpenAiHttpError(
        400,
        'invalid_request_error',
        `dimensions is ${dto.dimensions}, but '${deployment.id}' makes ${width}-dimensional embeddings and cannot shorten them; leave dimensions out or set it to ${width}.`,
        'dimensions',
        ErrorCode.unsupportedParameter,
      );
    }
    return {
      requestId: run.who.id.slice(openAiEmbeddings.idPrefix.length),
      body: toEmbeddingList(run.who.model, reply, dto.encoding_format ?? 'float'),
      headers: run.headers,
    };
  }
}
