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
  Validate,
  ValidateNested,
} from 'class-validator';
import {
  ErrorCode,
  SERVICE_TIERS,
  type InputContentPart,
  type ResponseInputItem,
  type ResponseTool,
  type ServiceTier,
} from '@conveyor/openai';
import type { GenerationJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import type { DecodedImage, ImageLimits } from './image-data-uri.parser.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { RequestProblem } from './request-problem.js';
import { decodeImages } from './response-images.js';
import {
  ResponseInputConstraint,
  callIds,
  checkCallOutputs,
  inputItems,
  itemChars,
  itemsToTurns,
} from './response-input.js';
import { checkFormat, outputFormat, responseTools } from './response-tools.js';
import { checkTools, toJobTools } from './tool-checks.js';
import { ResponseReasoningDto, ResponseTextDto, ResponseToolChoiceConstraint } from './response-tools.dto.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';

export type ResponseToolChoiceValue =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string; namespace?: string }
  | { type: 'custom'; name: string };

/**
 * The body of `POST /v1/responses`: its fields and their validation, the checks that need the
 * deployment (`check`), and the chat job it becomes (`toJob`). A continuation's earlier items
 * (`previous_response_id`) are part of what `check` checks: the calls its input answers, its length.
 */
export class ResponseRequestDto extends SamplingFieldsDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @Validate(ResponseInputConstraint)
  @ApiProperty({
    description:
      'Text (one user message), or items: messages (input_text / input_image parts; images as data: URIs), function_call and function_call_output items.',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
  })
  input: string | ResponseInputItem[];

  /** A system message ahead of the input; not carried on to a response that continues this one. */
  @IsOptional()
  @IsString()
  instructions?: string | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKENS_LIMIT)
  max_output_tokens?: number | null;

  @IsOptional()
  @IsInt()
  @Min(Number.MIN_SAFE_INTEGER)
  @Max(Number.MAX_SAFE_INTEGER)
  seed?: number | null;

  @IsOptional()
  @IsBoolean()
  stream?: boolean | null;

  /** vLLM / llama.cpp extra, as chat takes it: keep generating past end-of-generation tokens, up to max_output_tokens. */
  @IsOptional()
  @IsBoolean()
  ignore_eos?: boolean | null;

  /** Default true: the response is kept (for RESPONSE_TTL_MS) to be retrieved and continued. */
  @IsOptional()
  @IsBoolean()
  store?: boolean | null;

  /** Answer at once with a queued response, generated in the background and polled. */
  @IsOptional()
  @IsBoolean()
  background?: boolean | null;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  previous_response_id?: string | null;

  /** Function, custom and namespace tools, and hosted tools (accepted, left out of the prompt); checked in `check`. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ApiProperty({ required: false, nullable: true, type: 'array', items: { type: 'object' } })
  tools?: ResponseTool[] | null;

  @IsOptional()
  @Validate(ResponseToolChoiceConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: [
      { type: 'string', enum: ['none', 'auto', 'required'] },
      {
        type: 'object',
        required: ['type', 'name'],
        properties: {
          type: { type: 'string', enum: ['function', 'custom'] },
          name: { type: 'string' },
          namespace: { type: 'string' },
        },
      },
    ],
  })
  tool_choice?: ResponseToolChoiceValue | null;

  @IsOptional()
  @IsBoolean()
  parallel_tool_calls?: boolean | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResponseTextDto)
  text?: ResponseTextDto | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResponseReasoningDto)
  reasoning?: ResponseReasoningDto | null;

  @IsOptional()
  @IsObject()
  @ApiProperty({ required: false, nullable: true, type: Object, additionalProperties: { type: 'string' } })
  metadata?: Record<string, string> | null;

  @IsOptional()
  @IsString()
  user?: string | null;

  /** Extra output: `reasoning.encrypted_content` puts an encoding of each reasoning item on it, to send back as input. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  include?: string[] | null;

  /** The conversation's key: requests with the same key are routed to the worker holding its prompt. */
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  prompt_cache_key?: string | null;

  /** The queue's band: `priority` where the key may use it (else `default`), `default`, `flex`; `auto` is `default`. */
  @IsOptional()
  @IsIn(SERVICE_TIERS)
  @ApiProperty({ required: false, nullable: true, enum: SERVICE_TIERS })
  service_tier?: ServiceTier | null;

  /** Only "disabled" is honoured: a conversation longer than the context is refused, never cut. */
  @IsOptional()
  @IsIn(['disabled'], { message: 'truncation must be "disabled": conversations are never truncated here' })
  truncation?: 'disabled' | null;

  /** Whether reasoning items carry `encrypted_content` (`include: ["reasoning.encrypted_content"]`). */
  wantsEncryptedReasoning(): boolean {
    return this.include?.includes('reasoning.encrypted_content') ?? false;
  }

  readonly #images = new Map<InputContentPart, DecodedImage>();
  /** Items of the responses this one continues, oldest first, as `check` was given them. */
  #history: readonly ResponseInputItem[] = [];

  /** The request's own input as items. */
  items(): ResponseInputItem[] {
    return inputItems(this.input);
  }

  /** The whole conversation the job renders, instructions aside: the earlier items, then the input. */
  conversation(): ResponseInputItem[] {
    return [...this.#history, ...this.items()];
  }

  maxTokens(deployment: DeploymentTraits): number | undefined {
    return given(this.max_output_tokens) ?? deployment.defaults.max_tokens;
  }

  /**
   * Refuses what this deployment cannot honour, naming the field; decodes the images last. `history`:
   * the stored conversation this request continues (`previous_response_id`), whose items come before
   * its own input in the job.
   */
  check(deployment: DeploymentTraits, images: ImageLimits, history: readonly ResponseInputItem[] = []): void {
    this.#history = history;
    if (given(this.background) && this.store === false)
      throw new RequestProblem('background responses must be stored: store cannot be false.', 'store');
    if (given(this.background) && given(this.stream))
      throw RequestProblem.unsupported('Streaming a background response', 'stream');
    if (deployment.task === 'embeddings') {
      throw new RequestProblem(
        `The model '${deployment.id}' serves embeddings only (POST /v1/embeddings).`,
        'model',
        ErrorCode.modelNotSupported,
      );
    }
    const maxTokens = this.maxTokens(deployment);
    if (maxTokens !== undefined && maxTokens >= deployment.contextSize) {
      throw new RequestProblem(
        `max_output_tokens is ${maxTokens}, but the model's context is ${deployment.contextSize} tokens, input included.`,
        'max_output_tokens',
        ErrorCode.contextLengthExceeded,
      );
    }
    const items = this.items();
    checkCallOutputs(items, new Set(callIds(this.#history)));
    const chars =
      itemChars(this.#history) +
      itemChars(items) +
      (this.instructions?.length ?? 0) +
      (this.tools?.length ? JSON.stringify(this.tools).length : 0);
    const most = deployment.contextSize * deployment.promptCharsPerToken;
    if (chars > most) {
      throw new RequestProblem(
        `The input is ${chars} characters; the model's context of ${deployment.contextSize} tokens holds at most ${most}.`,
        'input',
        ErrorCode.contextLengthExceeded,
      );
    }
    checkTools(responseTools(this));
    checkFormat(this);
    decodeImages(this.#history, this.items(), deployment, images, this.#images);
  }

  decodedImages(): DecodedImage[] {
    return [...new Map([...this.#images.values()].map((image) => [image.ref.sha256, image])).values()];
  }

  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): GenerationJobData {
    const instructions = given(this.instructions);
    const cacheKey = given(this.prompt_cache_key);
    return {
      requestId,
      deployment: deployment.id,
      messages: [
        ...(instructions ? [{ role: 'system' as const, content: instructions }] : []),
        ...itemsToTurns(this.conversation(), this.#images),
      ],
      ...toJobTools(responseTools(this)),
      responseFormat: outputFormat(this),
      ...(cacheKey ? { cacheKey } : {}),
      sampling: {
        ...this.knobs(deployment.defaults),
        seed: given(this.seed),
        ignoreEos: given(this.ignore_eos),
      },
      maxTokens: this.maxTokens(deployment),
      stop: [],
      enqueuedAt: now,
    };
  }
}
