import { MetadataConstraint } from './metadata.validator.js';
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
import { SERVICE_TIERS, type ResponseInputItem, type ResponseTool, type ServiceTier } from '@conveyor/openai';
import type { DeploymentTraits } from './deployment-traits.js';
import type { GenerationBody, GenerationRequest, ImagePart } from './generation-request.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { RequestProblem } from './request-problem.js';
import {
  ResponseInputConstraint,
  callIds,
  checkCallOutputs,
  imageParts,
  inputItems,
  itemChars,
  itemsToTurns,
} from './response-input.js';
import { checkFormat, outputFormat, responseTools } from './response-tools.js';
import { ResponseReasoningDto, ResponseTextDto, ResponseToolChoiceConstraint } from './response-tools.dto.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';

export type ResponseToolChoiceValue =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string; namespace?: string }
  | { type: 'custom'; name: string };

/**
 * The body of `POST /v1/responses`: its fields and their validation, the API's own rules
 * (`checkSurface`), and the neutral request it is (`toRequest`), which the one generation check and job
 * serve. A continuation's earlier items (`previous_response_id`, given by `continues`) are part of both.
 */
export class ResponseRequestDto extends SamplingFieldsDto implements GenerationBody {
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

  /** Function, custom and namespace tools, and hosted tools (accepted, left out of the prompt); a malformed one is refused as the body becomes its neutral request. */
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
  @Validate(MetadataConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    type: Object,
    additionalProperties: { type: 'string', maxLength: 512 },
    maxProperties: 16,
  })
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

  /** Items of the responses this one continues, oldest first, as `continues` was given them. */
  #history: readonly ResponseInputItem[] = [];

  /** The request's own input as items. */
  items(): ResponseInputItem[] {
    return inputItems(this.input);
  }

  /**
   * The stored conversation this request continues (`previous_response_id`): its items come before the
   * request's own input, in the checks (the calls its input answers, its length) and in the job.
   */
  continues(history: readonly ResponseInputItem[]): this {
    this.#history = history;
    return this;
  }

  /** The whole conversation the job renders, instructions aside: the earlier items, then the input. */
  conversation(): ResponseInputItem[] {
    return [...this.#history, ...this.items()];
  }

  maxTokens(deployment: DeploymentTraits): number | undefined {
    return given(this.max_output_tokens) ?? deployment.defaults.max_tokens;
  }

  /**
   * The Responses API's own rules: a background response is stored and not streamed, each call output
   * answers a call of the conversation, a json_schema format is named.
   */
  checkSurface(): void {
    if (given(this.background) && this.store === false)
      throw new RequestProblem('background responses must be stored: store cannot be false.', 'store');
    if (given(this.background) && given(this.stream))
      throw RequestProblem.unsupported('Streaming a background response', 'stream');
    checkCallOutputs(this.items(), new Set(callIds(this.#history)));
    checkFormat(this);
  }

  /** The body in neutral terms, the conversation it continues included. */
  askedTier(): ServiceTier | null | undefined {
    return this.service_tier;
  }

  loggedPrompt(): unknown {
    return this.input;
  }

  toRequest(deployment: DeploymentTraits): GenerationRequest {
    const instructions = given(this.instructions);
    const cacheKey = given(this.prompt_cache_key);
    return {
      turns: (images) => [
        ...(instructions ? [{ role: 'system' as const, content: instructions }] : []),
        ...itemsToTurns(this.conversation(), images),
      ],
      tools: responseTools(this),
      format: outputFormat(this),
      formatAt: 'text.format.schema',
      ...(cacheKey ? { cacheKey } : {}),
      sampling: { ...this.knobs(deployment.defaults), seed: given(this.seed), ignoreEos: given(this.ignore_eos) },
      maxTokens: this.maxTokens(deployment),
      maxTokensAt: 'max_output_tokens',
      stop: [],
      promptChars:
        itemChars(this.#history) +
        itemChars(this.items()) +
        (this.instructions?.length ?? 0) +
        (this.tools?.length ? JSON.stringify(this.tools).length : 0),
      promptAt: 'input',
      // Earlier turns' images too: the job refers to them all.
      images: [...imageParts(this.#history, 'previous_response_id'), ...imageParts(this.items(), 'input')].map(
        ({ part, at }): ImagePart => {
          const url = given(part.image_url);
          return {
            part,
            at,
            source: url === undefined ? { fileAt: `${at}.file_id` } : { uri: url, at: `${at}.image_url` },
          };
        },
      ),
      imageType: 'input_image',
      imagesIn: 'conversation',
    };
  }
}
