import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Completion } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { CompletionsHttpHandler } from './completions-http.handler.js';

/** OpenAI's legacy completions route: raw prompts, no chat template. */
@Controller('v1')
@UseAuthScheme('Bearer')
export class CompletionsController {
  constructor(private readonly http: CompletionsHttpHandler) {}

  @Post('completions')
  @HttpCode(200)
  create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<Completion | void> {
    return this.http.handle(body, reply);
  }
}
