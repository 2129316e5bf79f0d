import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ErrorCode } from '@conveyor/openai';
import type { TokenizeInput } from '@conveyor/queue';
import { MAX_MESSAGES } from './chat-completion-request.dto.js';
import { toTurn } from './chat-messages.js';
import { ChatMessageDto } from './chat-message.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { checkGenerates, checkPromptLength } from './generation-checks.js';
import { RequestProblem } from './request-problem.js';
import { ToolDto } from './tools.dto.js';

/** The most token ids one /detokenize request may send. */
export const MAX_DETOKENIZE_TOKENS = 1_000_000;

/**
 * vLLM's `POST /tokenize` body: a `prompt` as it is, or chat `messages` rendered with the model's own
 * template (and `tools`), as the deployment's workers render a generation's prompt.
 */
export class TokenizeRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsOptional()
  @IsString()
  @MaxLength(10_000_000)
  prompt?: string | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MESSAGES)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages?: ChatMessageDto[] | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => ToolDto)
  tools?: ToolDto[] | null;

  /** With a prompt: the tokens the model puts in front of a sequence (BOS); default true. Chat templates write their own. */
  @IsOptional()
  @IsBoolean()
  add_special_tokens?: boolean | null;

  /** A rendered chat prompt always ends with the assistant's opening, as a generation's does. */
  @IsOptional()
  @IsIn([true], { message: 'add_generation_prompt must be true: prompts are rendered as a generation renders them' })
  add_generation_prompt?: boolean | null;

  /** Refuses what cannot be tokenized here, naming the field. */
  check(deployment: DeploymentTraits): void {
    checkGenerates(deployment);
    const hasPrompt = this.prompt !== undefined && this.prompt !== null;
    const hasMessages = !!this.messages;
    if (hasPrompt === hasMessages) throw new RequestProblem('Send either prompt or messages, not both.', null);
    if (this.messages) {
      for (const [i, m] of this.messages.entries()) {
        if (Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url')) {
          throw new RequestProblem(
            'Images cannot be tokenized here; send the text parts only.',
            `messages[${i}].content`,
            ErrorCode.unsupportedParameter,
          );
        }
      }
    }
    const chars = this.prompt?.length ?? JSON.stringify(this.messages ?? []).length;
    checkPromptLength(deployment, chars, hasPrompt ? 'prompt' : 'messages');
  }

  /** What the job tokenizes. */
  toInput(): TokenizeInput {
    if (this.messages) {
      const tools = (this.tools ?? []).map((t) => ({
        name: t.function.name,
        ...(t.function.description ? { description: t.function.description } : {}),
        ...(t.function.parameters ? { parameters: t.function.parameters } : {}),
      }));
      return {
        kind: 'chat',
        messages: this.messages.map((m) => toTurn(m, new Map())),
        ...(tools.length ? { tools } : {}),
      };
    }
    return { kind: 'text', text: this.prompt ?? '', addSpecialTokens: this.add_special_tokens !== false };
  }
}

/** vLLM's `POST /detokenize` body. */
export class DetokenizeRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @IsArray()
  @ArrayMaxSize(MAX_DETOKENIZE_TOKENS)
  @IsInt({ each: true })
  @Min(0, { each: true })
  @Max(2 ** 31 - 1, { each: true })
  tokens: number[];

  check(deployment: DeploymentTraits): void {
    checkGenerates(deployment);
  }

  toInput(): TokenizeInput {
    return { kind: 'detokenize', tokens: [...this.tokens] };
  }
}
