import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { RerankResponse } from '@conveyor/openai';
import type { RerankRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService } from '../generation/generation.service.js';
import { openAiRerank } from './openai-rerank.dialect.js';
import { toRerankResponse } from './rerank-response.mapper.js';

export interface RerankOutcome {
  requestId: string;
  body: RerankResponse;
  /** What the HTTP reply says of the request's admission (see ReplyRun). */
  headers: Record<string, string>;
}

/** The rerank use case: one job on the deployment's queue, as an embeddings request is, its scores gathered whole. */
@Injectable()
export class RerankService {
  constructor(private readonly generation: GenerationService) {}

  /** `caller`: the API key's name, recorded as the job's owner; `only` binds the request to one deployment. */
  async rerank(
    dto: RerankRequestDto,
    caller: string,
    signal: AbortSignal,
    only?: DeploymentConfig,
  ): Promise<RerankOutcome> {
    const deployment = this.generation.deploymentFor(dto.model, only);
    dto.check(deployment);
    const run = await this.generation.submit(
      deployment,
      (requestId, now) => dto.toJob(requestId, deployment, now),
      signal,
      { surface: openAiRerank, model: dto.model, stream: false, prompt: dto.query, caller },
    );
    const reply = await collectReply(run);
    return {
      requestId: run.who.id.slice(openAiRerank.idPrefix.length),
      body: toRerankResponse(run.who.id, run.who.model, reply, {
        topN: dto.top_n,
        ...(dto.return_documents ? { documents: dto.documents } : {}),
      }),
      headers: run.headers,
    };
  }
}
