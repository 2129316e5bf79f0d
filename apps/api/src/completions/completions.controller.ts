import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Completion } from '@conveyor/openai';
import { CompletionRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { CompletionsHttpHandler } from './completions-http.handler.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { openAiCompletions } from './openai-completions.dialect.js';

/** OpenAI's legacy completions route: raw prompts, no chat template. */
@Controller()
@UseAuthScheme('Bearer')
@Speaks(openAiCompletions)
export class CompletionsController {
  constructor(private readonly http: CompletionsHttpHandler) {}

  @Post(openAiCompletions.route)
  @HttpCode(200)
  @ApiRoute('Legacy text completion (sync or SSE)', { auth: 'Bearer', errors: [400, 401, 404, 413, 429, 503, 504] })
  @ApiJsonBody(CompletionRequestDto)
  @ApiJsonOrEvents('text_completion')
  create(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Completion | void> {
    return this.http.handle(body, caller, reply);
  }
}
