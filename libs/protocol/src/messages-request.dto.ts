import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
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
import { ANTHROPIC_SERVICE_TIERS, type AnthropicServiceTier, type ServiceTier } from '@conveyor/openai';
import type { OutputFormat } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { given } from './sampling-fields.dto.js';
import type { GenerationRequest } from './generation-request.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { MessagesMetadataDto, MessagesOutputConfigDto } from './messages-fields.dto.js';
import { MessagesPromptDto } from './messages-prompt.dto.js';
import { RequestProblem } from './request-problem.js';
import { MAX_STOP_SEQUENCES } from './string-or-strings.validator.js';

/**
 * Anthropic's Messages body (`POST /v1/messages`): the prompt, and the reply's budget, stop
 * sequences, sampling, streaming and output format. The one generation check and job serve it as they
 * serve a chat request but for one difference, which its neutral request declares (`clampToContext`):
 * `max_tokens` is the most the reply may take, and a reply with less room left in the context runs to
 * its end (`model_context_window_exceeded`), as on Anthropic's API, where chat refuses such a request.
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

  /** `auto`: the priority band where the key may use it; `standard_only`: the default band. */
  @IsOptional()
  @IsIn(ANTHROPIC_SERVICE_TIERS)
  @ApiProperty({ required: false, nullable: true, enum: ANTHROPIC_SERVICE_TIERS })
  service_tier?: AnthropicServiceTier | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MessagesMetadataDto)
  metadata?: MessagesMetadataDto | null;

  /** `effort` is accepted; `format` holds the reply to a JSON Schema. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MessagesOutputConfigDto)
  output_config?: MessagesOutputConfigDto | null;

  /** Anthropic's clearing of old tool results and thinking: accepted, not applied (the whole conversation is the prompt). */
  @IsOptional()
  @IsObject()
  context_management?: Record<string, unknown> | null;

  /** Not Anthropic's, as with the chat body's: makes sampling repeatable. */
  @IsOptional()
  @IsInt()
  @Min(Number.MIN_SAFE_INTEGER)
  @Max(Number.MAX_SAFE_INTEGER)
  seed?: number | null;

  /**
   * vLLM / llama.cpp extra, as the chat and Responses bodies take it: keep generating past
   * end-of-generation tokens, up to max_tokens. A Message Batch's requests take it too, being this body.
   */
  @IsOptional()
  @IsBoolean()
  ignore_eos?: boolean | null;

  /** Anthropic's `auto` (the default) asks for the priority band, served where the key may use it; `standard_only` for the default band. */
  override askedTier(): ServiceTier {
    return this.service_tier === 'standard_only' ? 'default' : 'priority';
  }

  /** The conversation's rules, and the thought's budget within the reply's. */
  override checkSurface(): void {
    super.checkSurface();
    const budget = this.thinking?.type === 'enabled' ? this.thinking.budget_tokens : undefined;
    if (budget !== undefined && budget >= this.max_tokens) {
      throw new RequestProblem(
        `thinking.budget_tokens (${budget}) must be less than max_tokens (${this.max_tokens}).`,
        'thinking.budget_tokens',
      );
    }
  }

  /** The reply's JSON Schema, from `output_config.format`; none for plain text. */
  outputFormat(): Extract<OutputFormat, { type: 'json_schema' }> | undefined {
    const format = given(given(this.output_config)?.format);
    return format ? { type: 'json_schema', name: 'output', schema: format.schema } : undefined;
  }

  /** The prompt in neutral terms with the reply's fields; sampling fields left unset take the deployment's preset. */
  override toRequest(deployment: DeploymentTraits): GenerationRequest {
    return {
      ...super.toRequest(deployment),
      format: this.outputFormat(),
      formatAt: 'output_config.format.schema',
      sampling: { ...this.knobs(deployment.defaults), seed: given(this.seed), ignoreEos: given(this.ignore_eos) },
      maxTokens: this.max_tokens,
      // No bound on max_tokens against the context: the worker cuts it to the room the prompt leaves.
      clampToContext: true,
      stop: [...(this.stop_sequences ?? [])],
    };
  }
}
