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
import { SERVICE_TIERS, type ContentPart, type ServiceTier } from '@conveyor/openai';
import type { GenerationJobData } from '@conveyor/queue';
import { checkMessages, decodeImages, toTurn } from './chat-messages.js';
import { ChatMessageDto } from './chat-message.dto.js';
import { chatTools, outputFormat } from './chat-tools.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { GenerationFieldsDto, MAX_TOKENS_LIMIT } from './generation-fields.dto.js';
import type { DecodedImage, ImageLimits } from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';
import { given } from './sampling-fields.dto.js';
import { checkSchema } from './schema-checks.js';
import { checkTools, toJobTools } from './tool-checks.js';
import { ToolChoiceConstraint } from './tool-choice.validator.js';
import { ResponseFormatDto, ToolDto } from './tools.dto.js';

export { StreamOptionsDto } from './generation-fields.dto.js';

export const MAX_MESSAGES = 4096;

/**
 * The chat body of every route: its fields and their validation, the checks that need the
 * deployment (`check`), and the job it becomes (`toJob`). Fields this server cannot honour
 * yet are typed here so a malformed value still gets a precise 400; `check` refuses
 * meaningful values, naming the field.
 */
export class ChatCompletionRequestDto extends GenerationFieldsDto {
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

  /**
   * The images `check` decoded, by the part that carried each: `toJob` refers to them, and the service
   * stores their bytes. Private, so that no request field can set it.
   */
  readonly #images = new Map<ContentPart, DecodedImage>();

  /** The reply budget: max_completion_tokens, else max_tokens, else the deployment's preset. */
  maxTokens(deployment: DeploymentTraits): number | undefined {
    return given(this.max_completion_tokens) ?? given(this.max_tokens) ?? deployment.defaults.max_tokens;
  }

  /**
   * Refuses well-formed requests this deployment cannot honour, naming the field, rather than
   * silently ignoring what the caller asked for.
   */
  check(deployment: DeploymentTraits, images: ImageLimits): void {
    checkMessages(this.messages, deployment, images);
    this.checkPromptLength(deployment, this.promptChars(), 'messages');
    this.checkGeneration(deployment, this.maxTokens(deployment), given(this.n) ?? 1);
    if (given(this.top_logprobs) !== undefined && this.logprobs !== true) {
      throw new RequestProblem('top_logprobs requires logprobs to be true.', 'top_logprobs');
    }
    // A call's arguments must fit the context at least; the reply's format must fit the reply's budget.
    checkTools(chatTools(this), deployment.contextSize);
    const format = given(this.response_format);
    if (format?.type === 'json_schema') {
      if (!format.json_schema) {
        throw new RequestProblem(
          'response_format of type json_schema needs a json_schema object.',
          'response_format.json_schema',
        );
      }
      const schema = given(format.json_schema.schema);
      if (schema !== undefined)
        checkSchema(schema, 'response_format.json_schema.schema', this.maxTokens(deployment) ?? deployment.contextSize);
    }
    // Last: decoding is the costliest check, and a request refused for another reason need not pay it.
    decodeImages(this.messages, images, this.#images);
  }

  /** The images `check` decoded, each once (a conversation may carry one image in several turns). */
  decodedImages(): DecodedImage[] {
    return [...new Map([...this.#images.values()].map((image) => [image.ref.sha256, image])).values()];
  }

  /** The queue's job for this request; fields left unset take the deployment's preset or stay unset. */
  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): GenerationJobData {
    return {
      requestId,
      deployment: deployment.id,
      messages: this.messages.map((m) => toTurn(m, this.#images)),
      ...toJobTools(chatTools(this)),
      responseFormat: outputFormat(this),
      sampling: this.sampling(deployment.defaults),
      maxTokens: this.maxTokens(deployment),
      stop: this.stopList(),
      n: given(this.n),
      logprobs: this.logprobs === true ? (given(this.top_logprobs) ?? 0) : undefined,
      enqueuedAt: now,
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
