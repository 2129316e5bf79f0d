import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode, type Message, type MessageTokensCount } from '@conveyor/openai';
import { checkGeneration, RequestProblem, type MessagesPromptDto, type MessagesRequestDto } from '@conveyor/protocol';
import { collectReply } from '../generation/collect-reply.js';
import { GenerationService, type RequestContext } from '../generation/generation.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { TokenizeService } from '../generation/tokenize.service.js';
import { anthropicMessages } from './anthropic-messages.dialect.js';
import { toMessage } from './messages-response.mapper.js';

/** Anthropic's Messages use case, on the pipeline chat uses: check the body, queue its job, follow the reply. */
@Injectable()
export class MessagesService {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly generation: GenerationService,
    private readonly tokenizer: TokenizeService,
  ) {}

  /**
   * Enqueues the request for its caller, who alone may resume its reply; nothing is enqueued when it is
   * refused. The one way in of every generating surface (GenerationService.start), as anthropicMessages declares it.
   */
  start(dto: MessagesRequestDto, request: RequestContext): Promise<ReplyRun> {
    return this.generation.start(anthropicMessages, dto, request);
  }

  /** A non-streamed reply: the same event path, gathered. */
  async create(dto: MessagesRequestDto, run: ReplyRun): Promise<Message> {
    return toMessage(run.who, await collectReply(run), dto.thinkingEnabled, dto.max_tokens);
  }

  resume(messageId: string, caller: string, signal: AbortSignal): Promise<ReplyRun> {
    return this.generation.resume(messageId, anthropicMessages, caller, signal);
  }

  /** The prompt's tokens as the deployment's workers render and tokenize it: a generation's input_tokens. */
  async countTokens(
    dto: MessagesPromptDto,
    caller: string,
    signal: AbortSignal,
    only?: DeploymentConfig,
  ): Promise<{ requestId: string; body: MessageTokensCount }> {
    const deployment = this.generation.deploymentFor(dto.model, only);
    // The prompt checked as a request's is, with no reply's fields.
    const checked = checkGeneration(dto, deployment, this.config.api.images);
    if (checked.images().length) {
      throw new RequestProblem(
        'count_tokens cannot count image blocks yet; count the text, or send the request and read its usage.',
        'messages',
        ErrorCode.unsupportedParameter,
      );
    }
    // The turns and tools as a generation's job carries them, so the count is a generation's input_tokens.
    const { messages, tools } = checked.toJob('count_tokens');
    const { requestId, tokenized } = await this.tokenizer.run(
      deployment,
      { kind: 'chat', messages, ...(tools ? { tools } : {}) },
      caller,
      signal,
    );
    return { requestId, body: { input_tokens: tokenized.tokens.length } };
  }
}
