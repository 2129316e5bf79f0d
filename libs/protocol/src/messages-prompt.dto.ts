import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Validate,
  ValidateNested,
} from 'class-validator';
import { ErrorCode, type ContentBlockParam, type ImageBlockParam, type TextBlockParam } from '@conveyor/openai';
import type { ChatTurn, ToolChoice } from '@conveyor/queue';
import { MAX_MESSAGES } from './chat-completion-request.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { checkPromptLength } from './generation-checks.js';
import type { JobTools } from './job-tools.js';
import {
  checkImageCount,
  checkImageDataUriBytes,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { MessagesSystemConstraint } from './messages-content.validator.js';
import { MessageParamDto, MessagesToolChoiceDto, MessagesToolDto, ThinkingConfigDto } from './messages-fields.dto.js';
import { imageDataUri, messagesChars, messagesToTurns, systemTurns } from './messages-turns.js';
import { RequestProblem } from './request-problem.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';
import { checkTools, toJobTools, type DeclaredTools } from './tool-checks.js';

/**
 * What Anthropic's Messages body says about the prompt: the model, system, messages, tools and
 * tool choice. `POST /v1/messages/count_tokens` takes exactly this; `MessagesRequestDto` adds the
 * reply's fields. The sampling knobs beyond Anthropic's own (min_p, the penalties) are taken as
 * the chat body takes them.
 */
export class MessagesPromptDto extends SamplingFieldsDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsOptional()
  @Validate(MessagesSystemConstraint)
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: [
      { type: 'string' },
      {
        type: 'array',
        items: { type: 'object', required: ['type', 'text'], properties: { type: { enum: ['text'] } } },
      },
    ],
  })
  system?: string | TextBlockParam[] | null;

  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_MESSAGES)
  @ValidateNested({ each: true })
  @Type(() => MessageParamDto)
  messages: MessageParamDto[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => MessagesToolDto)
  tools?: MessagesToolDto[] | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MessagesToolChoiceDto)
  tool_choice?: MessagesToolChoiceDto | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ThinkingConfigDto)
  thinking?: ThinkingConfigDto | null;

  /** The images `checkPrompt` decoded, by the block that carried each. Private: no request field can set it. */
  readonly #images = new Map<ContentBlockParam, DecodedImage>();

  /** Whether the reply's thought segment is returned, as `thinking` blocks. */
  get thinkingEnabled(): boolean {
    const thinking = given(this.thinking);
    return !!thinking && thinking.type !== 'disabled' && thinking.display !== 'omitted';
  }

  /** The checks of the prompt against the deployment, naming the field at fault. */
  checkPrompt(deployment: DeploymentTraits, images: ImageLimits): void {
    this.checkConversation();
    const chars =
      messagesChars(this.messages) +
      (systemTurns(this.system)[0]?.content.length ?? 0) +
      (this.tools?.length ? JSON.stringify(this.tools).length : 0);
    checkPromptLength(deployment, chars, 'messages');
    checkTools(this.declaredTools());
    this.checkImages(deployment, images);
  }

  /** The images `checkPrompt` decoded, each once. */
  decodedImages(): DecodedImage[] {
    return [...new Map([...this.#images.values()].map((image) => [image.ref.sha256, image])).values()];
  }

  /** The system prompt and the messages as the queue's chat turns. */
  turns(): ChatTurn[] {
    return [...systemTurns(this.system, this.messages), ...messagesToTurns(this.messages, this.#images)];
  }

  /** The tools and the choice among them, as a job carries them; `none` tells the model of no tools. */
  jobTools(): JobTools {
    return toJobTools(this.declaredTools());
  }

  /** The tools in neutral terms: Anthropic's `any` is the queue's `required`, a named `tool` a forced call. */
  private declaredTools(): DeclaredTools {
    const choice = given(this.tool_choice);
    const toolChoice: ToolChoice =
      choice?.type === 'none'
        ? 'none'
        : choice?.type === 'any'
          ? 'required'
          : choice?.type === 'tool'
            ? { name: choice.name as string }
            : 'auto';
    return {
      tools: (this.tools ?? []).map((t, i) => ({
        name: t.name,
        description: t.description,
        parameters: t.input_schema,
        nameAt: `tools[${i}].name`,
        parametersAt: `tools[${i}].input_schema`,
      })),
      choice: toolChoice,
      choiceAt: 'tool_choice.name',
      // Anthropic's way of asking for one call at most.
      parallel: choice?.disable_parallel_tool_use !== true,
    };
  }

  /** Tool results answer earlier calls; the conversation (system turns aside) ends with the user's turn. */
  private checkConversation(): void {
    const callIds = new Set<string>();
    for (const [i, m] of this.messages.entries()) {
      if (typeof m.content === 'string') continue;
      for (const [j, block] of m.content.entries()) {
        if (block.type === 'tool_use') callIds.add(block.id);
        if (block.type === 'tool_result' && !callIds.has(block.tool_use_id)) {
          throw new RequestProblem(
            `messages[${i}].content[${j}] answers tool_use '${block.tool_use_id}', which no earlier assistant message made.`,
            `messages[${i}].content[${j}].tool_use_id`,
          );
        }
      }
    }
    const last = this.messages.findLastIndex((m) => m.role !== 'system');
    if (last < 0) {
      throw new RequestProblem('messages holds only system turns; the conversation needs a user message.', 'messages');
    }
    if (this.messages[last]?.role === 'assistant') {
      throw new RequestProblem(
        "The last message is the assistant's: continuing a prefilled reply is not supported here; end with a user message.",
        `messages[${last}].role`,
        ErrorCode.unsupportedParameter,
      );
    }
  }

  /** Sizes first, whatever the deployment; then whether it reads images; then the count; then decoding, the costliest. */
  private checkImages(deployment: DeploymentTraits, limits: ImageLimits): void {
    this.#images.clear();
    const blocks: { block: ImageBlockParam; at: string }[] = [];
    for (const [i, m] of this.messages.entries()) {
      if (typeof m.content === 'string') continue;
      for (const [j, block] of m.content.entries()) {
        if (block.type !== 'image') continue;
        const at = `messages[${i}].content[${j}].source.data`;
        checkImageDataUriBytes(imageDataUri(block), limits, at);
        blocks.push({ block, at });
      }
    }
    if (!blocks.length) return;
    if (!deployment.vision) {
      throw new RequestProblem(
        `Image blocks are only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
        blocks[0]!.at.replace(/\.source\.data$/, '.type'),
        ErrorCode.modelNotSupported,
      );
    }
    checkImageCount(blocks, limits, 'request');
    for (const { block, at } of blocks) this.#images.set(block, parseImageDataUri(imageDataUri(block), limits, at));
  }
}
