import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, Min, Validate } from 'class-validator';
import { ErrorCode } from '@conveyor/openai';
import type { EmbedJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { EmbeddingInputConstraint } from './embedding-input.validator.js';
import { RequestProblem } from './request-problem.js';

export { MAX_EMBEDDING_INPUTS } from './embedding-input.validator.js';

export const EMBEDDING_ENCODING_FORMATS = ['float', 'base64'] as const;

/**
 * The body of `POST /v1/embeddings`. `@IsOptional` skips both undefined and
 * null, so `"dimensions": null` (which some clients send) means "not set".
 * `dimensions` is typed here; whether the model can honour it is checked
 * against the deployment.
 */
export class EmbeddingRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  /** A string, strings, token ids or token-id arrays; the one array shape throughout. */
  @Validate(EmbeddingInputConstraint)
  @ApiProperty({
    oneOf: [
      { type: 'string' },
      { type: 'array', items: { type: 'string' }, maxItems: 2048 },
      { type: 'array', items: { type: 'integer', minimum: 0 } },
      { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 0 } }, maxItems: 2048 },
    ],
  })
  input: string | string[] | number[] | number[][];

  @IsOptional()
  @IsIn(EMBEDDING_ENCODING_FORMATS, { message: 'encoding_format must be "float" or "base64"' })
  encoding_format?: (typeof EMBEDDING_ENCODING_FORMATS)[number] | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1 << 16)
  dimensions?: number | null;

  @IsOptional()
  @IsString()
  user?: string | null;

  /** Only a deployment with `task: embeddings` holds an embedding context; others generate text. */
  check(deployment: DeploymentTraits): void {
    if (deployment.task !== 'embeddings') {
      throw new RequestProblem(
        `The model '${deployment.id}' does not serve embeddings.`,
        'model',
        ErrorCode.modelNotSupported,
      );
    }
    // Each text is embedded on its own, so each must fit the context on its own; token ids cost nothing to check later.
    const most = deployment.contextSize * deployment.promptCharsPerToken;
    for (const [i, input] of embeddingInputs(this).entries()) {
      if (typeof input !== 'string' || input.length <= most) continue;
      throw new RequestProblem(
        `Input ${i} is ${input.length} characters; the model's context of ${deployment.contextSize} tokens holds at most ${most}.`,
        'input',
        ErrorCode.contextLengthExceeded,
      );
    }
  }

  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): EmbedJobData {
    return { requestId, deployment: deployment.id, inputs: embeddingInputs(this), enqueuedAt: now };
  }
}

/** The request's inputs as a list, one entry per vector to return. */
export function embeddingInputs(dto: EmbeddingRequestDto): Array<string | number[]> {
  const { input } = dto;
  if (typeof input === 'string') return [input];
  // A flat list of numbers is one tokenized input; any other list holds one input per item.
  if (typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}
