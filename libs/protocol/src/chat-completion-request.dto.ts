import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  Max,
  Min,
  Validate,
  ValidateNested,
} from 'class-validator';
import { SERVICE_TIERS, type ServiceTier } from '@conveyor/openai';
import { chatImageParts, checkToolAnswers, toTurn } from './chat-messages.js';
import { ChatMessageDto } from './chat-message.dto.js';
import { chatTools, outputFormat } from './chat-tools.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { GenerationFieldsDto, MAX_TOKENS_LIMIT } from './generation-fields.dto.js';
import type { GenerationBody, GenerationRequest } from './generation-request.js';
import { RequestProblem } from './request-problem.js';
import { given } from './sampling-fields.dto.js';
import { ToolChoiceConstraint } from './tool-choice.validator.js';
import { ResponseFormatDto, ToolDto } from './tools.dto.js';

export { StreamOptionsDto } from './generation-fields.dto.js';

export const MAX_MESSAGES = 4096;

/**
 * The chat body of every route: its fields and their validation, chat's own rules (`checkSurface`), and
 * the neutral request it is (`toRequest`), which the one generation check and job serve. Fields this
 * server cannot honour yet are typed here so a malformed value still gets a precise 400.
 */
export class ChatCompletionRequestDto extends GenerationFieldsDto implements GenerationBody {
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_MESSAGES)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages: ChatMessageDto[];

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  max_completion_tokens?: number | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => ToolDto)
  tools?: ToolDto[] | null;

  @IsOptional()
  @Validate(ToolChoiceConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: [
      { type: 'string', enum: ['none', 'auto', 'required'] },
      {
        type: 'object',
        required: ['type', 'function'],
        properties: {
          type: { type: 'string', enum: ['function'] },
          function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
      },
    ],
  })
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } } | null;

  /** False: at most one call per reply. Unset or true: as many as the model makes. */
  @IsOptional()
  @IsBoolean()
  parallel_tool_calls?: boolean | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResponseFormatDto)
  response_format?: ResponseFormatDto | null;

  @IsOptional()
  @IsBoolean()
  logprobs?: boolean | null;

  /** The queue's band: `priority` where the key may use it (else `default`), `default`, `flex`; `auto` is `default`. */
  @IsOptional()
  @IsIn(SERVICE_TIERS)
  @ApiProperty({ required: false, nullable: true, enum: SERVICE_TIERS })
  service_tier?: ServiceTier | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(20)
  top_logprobs?: number | null;

  /** The reply budget: max_completion_tokens, else max_tokens, else the deployment's preset. */
  maxTokens(deployment: DeploymentTraits): number | undefined {
    return given(this.max_completion_tokens) ?? given(this.max_tokens) ?? deployment.defaults.max_tokens;
  }

  /** Chat's own rules: a tool message answers an earlier call, top_logprobs needs logprobs, json_schema its object. */
  checkSurface(): void {
    checkToolAnswers(this.messages);
    if (given(this.top_logprobs) !== undefined && this.logprobs !== true) {
      throw new RequestProblem('top_logprobs requires logprobs to be true.', 'top_logprobs');
    }
    const format = given(this.response_format);
    if (format?.type === 'json_schema' && !format.json_schema) {
      throw new RequestProblem(
        'response_format of type json_schema needs a json_schema object.',
        'response_format.json_schema',
      );
    }
  }

  /** The body in neutral terms; fields left unset take the deployment's preset or stay unset. */
  askedTier(): ServiceTier | null | undefined {
    return this.service_tier;
  }

  loggedPrompt(): unknown {
    return this.messages;
  }

  toRequest(deployment: DeploymentTraits): GenerationRequest {
    return {
      turns: (images) => this.messages.map((m) => toTurn(m, images)),
      tools: chatTools(this),
      format: outputFormat(this),
      formatAt: 'response_format.json_schema.schema',
      sampling: this.sampling(deployment.defaults),
      maxTokens: this.maxTokens(deployment),
      // Whichever of the two set it: OpenAI's name for the budget in its refusals.
      maxTokensAt: 'max_tokens',
      stop: this.stopList(),
      n: given(this.n),
      logprobs: this.logprobs === true ? (given(this.top_logprobs) ?? 0) : undefined,
      promptChars: this.promptChars(),
      promptAt: 'messages',
      images: chatImageParts(this.messages),
      imageType: 'image_url',
      imagesIn: 'request',
    };
  }

  /** Characters of everything the template renders from the body: message text, calls, tool definitions. */
  private promptChars(): number {
    let chars = this.tools?.length ? JSON.stringify(this.tools).length : 0;
    for (const m of this.messages) {
      if (typeof m.content === 'string') chars += m.content.length;
      else for (const part of m.content ?? []) if (part.type === 'text') chars += part.text.length;
      for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
    }
    return chars;
  }
}
