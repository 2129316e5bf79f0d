import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { EmbeddingList } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { EmbeddingsHttpHandler } from './embeddings-http.handler.js';

/** OpenAI's route, as local servers and serverless GPU clouds expose it. */
@Controller('v1')
@UseAuthScheme('Bearer')
export class EmbeddingsController {
  constructor(private readonly http: EmbeddingsHttpHandler) {}

  @Post('embeddings')
  @HttpCode(200)
  create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<EmbeddingList> {
    return this.http.handle(body, reply);
  }
}
