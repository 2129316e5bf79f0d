import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import type { GenerationJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { given } from './sampling-fields.dto.js';
import { checkGeneration } from './generation-checks.js';
import type { ImageLimits } from './image-data-uri.parser.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { MessagesMetadataDto } from './messages-fields.dto.js';
import { MessagesPromptDto } from './messages-prompt.dto.js';
import { RequestProblem } from './request-problem.js';
import { MAX_STOP_SEQUENCES } from './string-or-strings.validator.js';

/**
 * Anthropic's Messages body (`POST /v1/messages`): the prompt, and the reply's budget, stop
 * sequences, sampling and streaming. Its checks against the deployment and the job it becomes
 * are those of a chat request; only the shape differs.
 */
export class MessagesRequestDto extends MessagesPromptDto {
  /** Required, as on Anthropic's API: a reply's budget is always the caller's. */
  @IsInt({ message: 'max_tokens is required: an integer of at least 1' })
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  max_tokens: number;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_STOP_SEQUENCES)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(256, { each: true })
  @ApiProperty({ required: false, nullable: true, type: [String], maxItems: MAX_STOP_SEQUENCES })
  stop_sequences?: string[] | null;

  @IsOptional()
  @IsBoolean()
  stream?: boolean | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MessagesMetadataDto)
  metadata?: MessagesMetadataDto | null;

  /** Not Anthropic's, as with the chat body's: makes sampling repeatable. */
  @IsOptional()
  @IsInt()
  @Min(Number.MIN_SAFE_INTEGER)
  @Max(Number.MAX_SAFE_INTEGER)
  seed?: number | null;

  /** Refuses what this deployment cannot honour, naming the field. */
  check(deployment: DeploymentTraits, images: ImageLimits): void {
    checkGeneration(deployment, this.max_tokens, 1);
    const budget = this.thinking?.type === 'enabled' ? this.thinking.budget_tokens : undefined;
    if (budget !== undefined && budget >= this.max_tokens) {
      throw new RequestProblem(
        `thinking.budget_tokens (${budget}) must be less than max_tokens (${this.max_tokens}).`,
        'thinking.budget_tokens',
      );
    }
    this.checkPrompt(deployment, images);
  }

  /** The queue's job for this request; sampling fields left unset take the deployment's preset. */
  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): GenerationJobData {
    return {
      requestId,
      deployment: deployment.id,
      messages: this.turns(),
      ...this.jobTools(),
      sampling: { ...this.knobs(deployment.defaults), seed: given(this.seed) },
      maxTokens: this.max_tokens,
      stop: [...(this.stop_sequences ?? [])],
      enqueuedAt: now,
    };
  }
}
