import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ChatCompletion } from '@conveyor/openai';
import { ChatCompletionRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { ChatHttpHandler } from '../chat/chat-http.handler.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { openAiChat } from '../chat/openai-chat.dialect.js';

/** The hosted model-host form: the chat body POSTed to an environment's predict route. */
@Controller('environments/production')
@UseAuthScheme('Api-Key')
@Speaks(openAiChat)
export class PredictController {
  constructor(private readonly http: ChatHttpHandler) {}

  @Post('predict')
  @HttpCode(200)
  @ApiRoute('Hosted model-host form: the chat body, `Authorization: Api-Key <key>`', {
    auth: 'Api-Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(ChatCompletionRequestDto)
  @ApiJsonOrEvents('chat.completion')
  predict(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion | void> {
    return this.http.handle(body, caller, reply);
  }
}
