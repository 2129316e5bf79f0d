import { Injectable } from '@nestjs/common';
import type { ScoreResponse } from '@conveyor/openai';
import type { ScoreRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService } from '../generation/generation.service.js';
import { openAiScore } from './openai-score.dialect.js';
import { toScoreResponse } from './score-response.mapper.js';

export interface ScoreOutcome {
  requestId: string;
  body: ScoreResponse;
  /** What the HTTP reply says of the request's admission (see ReplyRun). */
  headers: Record<string, string>;
}

/** The score use case: one job on a rerank deployment's queue, its pairs' scores gathered whole. */
@Injectable()
export class ScoreService {
  constructor(private readonly generation: GenerationService) {}

  /** `caller`: the API key's name, recorded as the job's owner. */
  async score(dto: ScoreRequestDto, caller: string, signal: AbortSignal): Promise<ScoreOutcome> {
    const deployment = this.generation.deploymentFor(dto.model);
    dto.check(deployment);
    const run = await this.generation.submit(
      deployment,
      (requestId, now) => dto.toJob(requestId, deployment, now),
      signal,
      { surface: openAiScore, model: dto.model, stream: false, prompt: dto.text_1, caller },
    );
    const reply = await collectReply(run);
    return {
      requestId: run.who.id.slice(openAiScore.idPrefix.length),
      body: toScoreResponse(run.who.id, run.who.model, run.who.created, reply),
      headers: run.headers,
    };
  }
}
