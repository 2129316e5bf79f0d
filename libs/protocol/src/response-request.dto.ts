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
import { ErrorCode, type InputContentPart, type ResponseInputItem } from '@conveyor/openai';
import type { GenerationJobData, OutputFormat, ToolChoice, ToolSpec } from '@conveyor/queue';
import { checkSchema } from './chat-completion-request.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import {
  checkImageDataUriBytes,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { MAX_TOKENS_LIMIT } from './limits.js';
import { RequestProblem } from './request-problem.js';
import {
  ResponseInputConstraint,
  checkCallOutputs,
  imageParts,
  inputItems,
  itemChars,
  itemsToTurns,
} from './response-input.js';
import {
  ResponseReasoningDto,
  ResponseTextDto,
  ResponseToolChoiceConstraint,
  ResponseToolDto,
} from './response-tools.dto.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';

export type ResponseToolChoiceValue = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

/**
 * The body of `POST /v1/responses`: its fields and their validation, the checks that need the
 * deployment (`check`), and the chat job it becomes (`toJob`). A continuation's earlier items
 * (`previous_response_id`) are given by `continueFrom` before `check`.
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

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => ResponseToolDto)
  tools?: ResponseToolDto[] | null;

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
        properties: { type: { type: 'string', enum: ['function'] }, name: { type: 'string' } },
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

  /** Only "disabled" is honoured: a conversation longer than the context is refused, never cut. */
  @IsOptional()
  @IsIn(['disabled'], { message: 'truncation must be "disabled": conversations are never truncated here' })
  truncation?: 'disabled' | null;

  readonly #images = new Map<InputContentPart, DecodedImage>();
  /** Items of the responses this one continues, oldest first. */
  #history: ResponseInputItem[] = [];

  /** The request's own input as items. */
  items(): ResponseInputItem[] {
    return inputItems(this.input);
  }

  /** The whole conversation the job renders, instructions aside: the earlier items, then the input. */
  conversation(): ResponseInputItem[] {
    return [...this.#history, ...this.items()];
  }

  /** Makes this request continue a stored conversation: `items` come before its own input. */
  continueFrom(items: readonly ResponseInputItem[]): void {
    this.#history = [...items];
  }

  maxTokens(deployment: DeploymentTraits): number | undefined {
    return given(this.max_output_tokens) ?? deployment.defaults.max_tokens;
  }

  /** Refuses what this deployment cannot honour, naming the field; decodes the images last. */
  check(deployment: DeploymentTraits, images: ImageLimits): void {
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
    checkCallOutputs(items, new Set(this.#history.flatMap((i) => (i.type === 'function_call' ? [i.call_id] : []))));
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
    this.checkTools();
    this.checkFormat();
    this.decodeImages(deployment, images);
  }

  decodedImages(): DecodedImage[] {
    return [...new Map([...this.#images.values()].map((image) => [image.ref.sha256, image])).values()];
  }

  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): GenerationJobData {
    const instructions = given(this.instructions);
    return {
      requestId,
      deployment: deployment.id,
      messages: [
        ...(instructions ? [{ role: 'system' as const, content: instructions }] : []),
        ...itemsToTurns(this.conversation(), this.#images),
      ],
      ...this.jobTools(),
      responseFormat: this.outputFormat(),
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

  private checkTools(): void {
    const tools = this.tools ?? [];
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      if (names.has(tool.name)) throw new RequestProblem(`Tool name '${tool.name}' is used twice.`, `tools[${i}].name`);
      names.add(tool.name);
      const parameters = given(tool.parameters);
      if (parameters !== undefined) checkSchema(parameters, `tools[${i}].parameters`);
    }
    const choice = given(this.tool_choice);
    if (choice === undefined || choice === 'none' || choice === 'auto') return;
    if (!tools.length) throw new RequestProblem(`tool_choice ${JSON.stringify(choice)} needs tools.`, 'tool_choice');
    if (typeof choice === 'object' && !names.has(choice.name))
      throw new RequestProblem(
        `tool_choice names '${choice.name}', which is not one of the tools.`,
        'tool_choice.name',
      );
  }

  private checkFormat(): void {
    const format = given(this.text?.format);
    if (!format || format.type === 'text') return;
    if (format.type === 'json_schema') {
      if (!given(format.name))
        throw new RequestProblem('text.format of type json_schema needs a name.', 'text.format.name');
      const schema = given(format.schema);
      if (schema !== undefined) checkSchema(schema, 'text.format.schema');
    }
    if (this.tools?.length && this.tool_choice !== 'none') {
      throw new RequestProblem(
        'text.format cannot be combined with tools unless tool_choice is "none".',
        'text.format',
        ErrorCode.unsupportedParameter,
      );
    }
  }

  /** Counts, then decodes, every image of the conversation (earlier turns' too: the job refers to them all). */
  private decodeImages(deployment: DeploymentTraits, limits: ImageLimits): void {
    this.#images.clear();
    const parts = [...imageParts(this.#history, 'previous_response_id'), ...imageParts(this.items(), 'input')];
    if (!parts.length) return;
    if (!deployment.vision) {
      throw new RequestProblem(
        `Invalid content type: input_image is only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
        `${parts[0]!.at}.type`,
        ErrorCode.modelNotSupported,
      );
    }
    if (parts.length > limits.maxCount) {
      throw new RequestProblem(
        `The conversation carries ${parts.length} images; a request may carry at most ${limits.maxCount}.`,
        parts[limits.maxCount]!.at,
        ErrorCode.tooManyImages,
      );
    }
    for (const { part, at } of parts) {
      const url = given(part.image_url);
      if (url === undefined) throw RequestProblem.unsupported('input_image by file_id', `${at}.file_id`);
      // Never fetched: a URL here would let any caller make this server reach into its network.
      if (url.slice(0, 5).toLowerCase() !== 'data:') {
        throw new RequestProblem(
          'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
          `${at}.image_url`,
          ErrorCode.invalidImageUrl,
        );
      }
      checkImageDataUriBytes(url, limits, `${at}.image_url`);
    }
    for (const { part, at } of parts)
      this.#images.set(part, parseImageDataUri(part.image_url!, limits, `${at}.image_url`));
  }

  private jobTools(): { tools?: ToolSpec[]; toolChoice?: ToolChoice; parallelToolCalls?: boolean } {
    const choice = given(this.tool_choice);
    // With "none", the model is not told about the tools at all, so it cannot start a call.
    if (!this.tools?.length || choice === 'none') return {};
    const tools = this.tools.map((t): ToolSpec => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    }));
    return {
      tools,
      toolChoice: typeof choice === 'object' ? { name: choice.name } : (choice ?? 'auto'),
      ...(this.parallel_tool_calls === false ? { parallelToolCalls: false } : {}),
    };
  }

  private outputFormat(): OutputFormat | undefined {
    const format = given(this.text?.format);
    if (format?.type === 'json_object') return { type: 'json_object' };
    if (format?.type !== 'json_schema') return undefined;
    const schema = given(format.schema);
    return schema === undefined
      ? { type: 'json_object' }
      : { type: 'json_schema', name: format.name ?? 'output', schema };
  }
}
