import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  Max,
  Min,
  Validate,
  ValidateNested,
} from 'class-validator';
import { ErrorCode, type ContentPart, type ImageContentPart } from '@conveyor/openai';
import type { ChatTurn, GenerationJobData, OutputFormat, ToolChoice, ToolSpec, TurnPart } from '@conveyor/queue';
import { findUnsupportedSchemaFeature } from '@conveyor/structured';
import { ChatMessageDto } from './chat-message.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { GenerationFieldsDto, MAX_TOKENS_LIMIT } from './generation-fields.dto.js';
import {
  checkImageDataUriBytes,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';
import { given } from './sampling-fields.dto.js';
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
    this.checkMessages(deployment, images);
    this.checkPromptLength(deployment, this.promptChars(), 'messages');
    this.checkGeneration(deployment, this.maxTokens(deployment), given(this.n) ?? 1);
    if (given(this.top_logprobs) !== undefined && this.logprobs !== true) {
      throw new RequestProblem('top_logprobs requires logprobs to be true.', 'top_logprobs');
    }
    this.checkTools();
    const format = given(this.response_format);
    if (format?.type === 'json_schema') {
      if (!format.json_schema) {
        throw new RequestProblem(
          'response_format of type json_schema needs a json_schema object.',
          'response_format.json_schema',
        );
      }
      const schema = given(format.json_schema.schema);
      if (schema !== undefined) checkSchema(schema, 'response_format.json_schema.schema');
    }
    if (format && format.type !== 'text' && this.tools?.length && this.tool_choice !== 'none') {
      throw new RequestProblem(
        'response_format cannot be combined with tools unless tool_choice is "none".',
        'response_format',
        ErrorCode.unsupportedParameter,
      );
    }
    // Last: decoding is the costliest check, and a request refused for another reason need not pay it.
    this.decodeImages(images);
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
      ...this.jobTools(),
      responseFormat: this.outputFormat(),
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

  private checkMessages(deployment: DeploymentTraits, limits: ImageLimits): void {
    const callIds = new Set<string>();
    let firstImage: string | null = null;
    for (const [i, m] of this.messages.entries()) {
      if (m.role === 'assistant') for (const call of m.tool_calls ?? []) callIds.add(call.id);
      if (m.role === 'tool' && !callIds.has(m.tool_call_id as string)) {
        throw new RequestProblem(
          `messages[${i}] answers tool call '${m.tool_call_id}', which no earlier assistant message made.`,
          `messages[${i}].tool_call_id`,
        );
      }
      if (!Array.isArray(m.content)) continue;
      for (const [j, part] of m.content.entries()) {
        if (part.type !== 'image_url') continue;
        const at = `messages[${i}].content[${j}]`;
        firstImage ??= at;
        // Never fetched: a URL here would let any caller make this server reach into its network.
        if (part.image_url.url.slice(0, 5).toLowerCase() !== 'data:') {
          throw new RequestProblem(
            'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
            `${at}.image_url.url`,
            ErrorCode.invalidImageUrl,
          );
        }
        // Every image's size before what the deployment reads: a payload limit, as the body's, whatever the deployment.
        checkImageDataUriBytes(part.image_url.url, limits, `${at}.image_url.url`);
      }
    }
    // OpenAI names the part's type for a model without vision, and so does this.
    if (firstImage && !deployment.vision) {
      throw new RequestProblem(
        `Invalid content type: image_url is only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
        `${firstImage}.type`,
        ErrorCode.modelNotSupported,
      );
    }
  }

  /** Decodes every image part, in order, after counting them: a request over the count decodes none. */
  private decodeImages(limits: ImageLimits): void {
    this.#images.clear();
    const parts: { part: ImageContentPart; at: string }[] = [];
    for (const [i, m] of this.messages.entries()) {
      if (!Array.isArray(m.content)) continue;
      for (const [j, part] of m.content.entries()) {
        if (part.type === 'image_url') parts.push({ part, at: `messages[${i}].content[${j}]` });
      }
    }
    if (parts.length > limits.maxCount) {
      throw new RequestProblem(
        `The request carries ${parts.length} images; a request may carry at most ${limits.maxCount}.`,
        parts[limits.maxCount]!.at,
        ErrorCode.tooManyImages,
      );
    }
    for (const { part, at } of parts) {
      this.#images.set(part, parseImageDataUri(part.image_url.url, limits, `${at}.image_url.url`));
    }
  }

  private checkTools(): void {
    const tools = this.tools ?? [];
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      if (names.has(tool.function.name)) {
        throw new RequestProblem(`Tool name '${tool.function.name}' is used twice.`, `tools[${i}].function.name`);
      }
      names.add(tool.function.name);
      const parameters = given(tool.function.parameters);
      if (parameters !== undefined) checkSchema(parameters, `tools[${i}].function.parameters`);
    }
    const choice = given(this.tool_choice);
    if (choice === undefined || choice === 'none' || choice === 'auto') return;
    if (!tools.length) throw new RequestProblem(`tool_choice ${JSON.stringify(choice)} needs tools.`, 'tool_choice');
    if (typeof choice === 'object' && !names.has(choice.function.name)) {
      throw new RequestProblem(
        `tool_choice names '${choice.function.name}', which is not one of the tools.`,
        'tool_choice.function.name',
      );
    }
  }

  private jobTools(): { tools?: ToolSpec[]; toolChoice?: ToolChoice; parallelToolCalls?: boolean } {
    const choice = given(this.tool_choice);
    // With "none", the model is not told about the tools at all, so it cannot start a call.
    if (!this.tools?.length || choice === 'none') return {};
    const tools = this.tools.map((t): ToolSpec => ({
      name: t.function.name,
      ...(t.function.description ? { description: t.function.description } : {}),
      ...(t.function.parameters ? { parameters: t.function.parameters } : {}),
    }));
    return {
      tools,
      toolChoice: typeof choice === 'object' ? { name: choice.function.name } : (choice ?? 'auto'),
      ...(this.parallel_tool_calls === false ? { parallelToolCalls: false } : {}),
    };
  }

  private outputFormat(): OutputFormat | undefined {
    const format = given(this.response_format);
    if (format?.type === 'json_object') return { type: 'json_object' };
    if (format?.type === 'json_schema' && format.json_schema) {
      const schema = given(format.json_schema.schema);
      return schema === undefined
        ? { type: 'json_object' }
        : { type: 'json_schema', name: format.json_schema.name, schema };
    }
    return undefined;
  }
}

/** Refuses a JSON Schema with a keyword the grammar cannot enforce, naming it by its path. */
export function checkSchema(schema: unknown, param: string): void {
  const problem = findUnsupportedSchemaFeature(schema);
  if (!problem) return;
  const at = problem.path ? `${param}.${problem.path}` : param;
  throw new RequestProblem(
    `${problem.message} (at ${at}). Structured output cannot enforce "${problem.feature}".`,
    at,
    ErrorCode.unsupportedSchemaFeature,
  );
}

export function toTurn(m: ChatMessageDto, images: ReadonlyMap<ContentPart, DecodedImage>): ChatTurn {
  const parts = typeof m.content === 'string' ? [] : (m.content ?? []);
  const content =
    typeof m.content === 'string'
      ? m.content
      : parts
          .filter((p) => p.type === 'text')
          .map((p) => p.text)
          .join('\n');
  // "developer" is OpenAI's newer name for the system role.
  const turn: ChatTurn = { role: m.role === 'developer' ? 'system' : m.role, content };
  if (parts.some((p) => p.type === 'image_url')) {
    turn.parts = parts.map((p): TurnPart => {
      if (p.type === 'text') return { type: 'text', text: p.text };
      const image = images.get(p);
      if (!image) throw new Error('A request with images is checked (which decodes them) before it becomes a job.');
      return { type: 'image', image: image.ref };
    });
  }
  if (m.role === 'assistant' && m.tool_calls?.length) {
    turn.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  }
  if (m.role === 'tool') turn.toolCallId = m.tool_call_id as string;
  return turn;
}
