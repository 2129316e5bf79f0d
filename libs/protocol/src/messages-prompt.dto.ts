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
import { ErrorCode, type ServiceTier, type TextBlockParam } from '@conveyor/openai';
import type { ToolChoice } from '@conveyor/queue';
import { MAX_MESSAGES } from './chat-completion-request.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import type { GenerationBody, GenerationRequest, ImagePart } from './generation-request.js';
import { MessagesSystemConstraint } from './messages-content.validator.js';
import { MessageParamDto, MessagesToolChoiceDto, MessagesToolDto, ThinkingConfigDto } from './messages-fields.dto.js';
import { imageDataUri, messagesChars, messagesToTurns, systemTurns } from './messages-turns.js';
import { RequestProblem } from './request-problem.js';
import { given, SamplingFieldsDto } from './sampling-fields.dto.js';
import type { DeclaredTools } from './tool-checks.js';

/**
 * What Anthropic's Messages body says about the prompt: the model, system, messages, tools and
 * tool choice. `POST /v1/messages/count_tokens` takes exactly this; `MessagesRequestDto` adds the
 * reply's fields. The sampling knobs beyond Anthropic's own (min_p, the penalties) are taken as
 * the chat body takes them.
 */
export class MessagesPromptDto extends SamplingFieldsDto implements GenerationBody {
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

  /** Whether the reply's thought segment is returned, as `thinking` blocks. */
  get thinkingEnabled(): boolean {
    const thinking = given(this.thinking);
    return !!thinking && thinking.type !== 'disabled' && thinking.display !== 'omitted';
  }

  /** Anthropic's own rules of a conversation: see `checkConversation`. */
  checkSurface(): void {
    this.checkConversation();
  }

  /**
   * The prompt in neutral terms, with no reply's fields: what count_tokens counts, and what a Messages
   * request adds its reply's fields to.
   */
  /** A prompt alone (token counting) asks for no tier; a Messages request does (MessagesRequestDto). */
  askedTier(): ServiceTier | null | undefined {
    return undefined;
  }

  loggedPrompt(): unknown {
    return this.messages;
  }

  toRequest(deployment: DeploymentTraits): GenerationRequest {
    return {
      turns: (images) => [...systemTurns(this.system, this.messages), ...messagesToTurns(this.messages, images)],
      tools: this.declaredTools(),
      sampling: this.knobs(deployment.defaults),
      maxTokensAt: 'max_tokens',
      stop: [],
      promptChars:
        messagesChars(this.messages) +
        (systemTurns(this.system)[0]?.content.length ?? 0) +
        (this.tools?.length ? JSON.stringify(this.tools).length : 0),
      promptAt: 'messages',
      images: this.imageParts(),
      imageType: 'image',
      imagesIn: 'request',
    };
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

  /** The image blocks, in order, with the fields a refusal names. */
  private imageParts(): ImagePart[] {
    const parts: ImagePart[] = [];
    for (const [i, m] of this.messages.entries()) {
      if (typeof m.content === 'string') continue;
      for (const [j, block] of m.content.entries()) {
        if (block.type !== 'image') continue;
        const at = `messages[${i}].content[${j}]`;
        parts.push({ part: block, at, source: { uri: imageDataUri(block), at: `${at}.source.data` } });
      }
    }
    return parts;
  }
}
