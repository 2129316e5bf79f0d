import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Min,
} from 'class-validator';
import { ErrorCode } from '@conveyor/openai';
import type { EmbedJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { RequestProblem } from './request-problem.js';

/** Documents one rerank request may score: as many as an embeddings request's inputs. */
export const MAX_RERANK_DOCUMENTS = 2048;

/**
 * The body of `POST /v1/rerank`, the Jina/Cohere shape llama.cpp's server and vLLM take: a query and
 * the documents to score against it. `top_n` keeps the best; `return_documents` echoes each one.
 */
export class RerankRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsString()
  @IsNotEmpty()
  query: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RERANK_DOCUMENTS)
  @IsString({ each: true })
  @ApiProperty({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_RERANK_DOCUMENTS })
  documents: string[];

  @IsOptional()
  @IsInt()
  @Min(1)
  top_n?: number | null;

  @IsOptional()
  @IsBoolean()
  return_documents?: boolean | null;

  /** Only a deployment with `task: rerank` holds a ranking context; each pair must fit it on its own. */
  check(deployment: DeploymentTraits): void {
    if (deployment.task !== 'rerank') {
      throw new RequestProblem(`The model '${deployment.id}' does not rerank.`, 'model', ErrorCode.modelNotSupported);
    }
    const most = deployment.contextSize * deployment.promptCharsPerToken;
    for (const [i, document] of this.documents.entries()) {
      if (this.query.length + document.length <= most) continue;
      throw new RequestProblem(
        `Document ${i} and the query are ${this.query.length + document.length} characters; the model's context of ${deployment.contextSize} tokens holds at most ${most}.`,
        'documents',
        ErrorCode.contextLengthExceeded,
      );
    }
  }

  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): EmbedJobData {
    return { requestId, deployment: deployment.id, inputs: [...this.documents], query: this.query, enqueuedAt: now };
  }
}
