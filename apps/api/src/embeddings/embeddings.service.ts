import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { EmbeddingList } from '@conveyor/openai';
import type { EmbeddingRequestDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ChatService, collectReply } from '../chat/chat.service.js';
import { dimensionsOf, toEmbeddingList } from './embeddings-response.mapper.js';
import { assertServesEmbeddings, toEmbedJob } from './embedding-request.parser.js';

export const EMBEDDING_ID_PREFIX = 'embd-';

export interface EmbeddingsResult {
  requestId: string;
  body: EmbeddingList;
}

/** The embeddings use case: one job on the deployment's queue, its reply gathered whole. */
@Injectable()
export class EmbeddingsService {
  constructor(private readonly chat: ChatService) {}

  /** `only` binds the request to one deployment (an org/app route serves just its own). */
  async create(dto: EmbeddingRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<EmbeddingsResult> {
    const deployment = this.chat.deploymentFor(dto.model, only);
    assertServesEmbeddings(deployment);
    const run = await this.chat.submit(deployment, (requestId, now) => toEmbedJob(dto, requestId, deployment.id, now), signal, {
      idPrefix: EMBEDDING_ID_PREFIX,
      stream: false,
      prompt: dto.input,
    });
    const reply = await collectReply(run);
    // The API never loads the model, so its width is only known from a reply; a model cannot change it.
    const width = dimensionsOf(reply);
    if (dto.dimensions != null && width !== null && dto.dimensions !== width) {
      throw new OpenAiHttpError(
        400,
        'invalid_request_error',
        `dimensions is ${dto.dimensions}, but '${deployment.id}' makes ${width}-dimensional embeddings and cannot shorten them; leave dimensions out or set it to ${width}.`,
        'dimensions',
        'unsupported_parameter',
      );
    }
    return { requestId: run.who.id.slice(EMBEDDING_ID_PREFIX.length), body: toEmbeddingList(deployment.id, reply, dto.encoding_format ?? 'float') };
  }
}
