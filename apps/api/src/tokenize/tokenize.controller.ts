import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DetokenizeResponse, TokenizeResponse } from '@conveyor/openai';
import { DetokenizeRequestDto, TokenizeRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { TokenizeHttpHandler } from './tokenize-http.handler.js';

const ERRORS = [400, 401, 404, 413, 429, 503, 504];

/** vLLM's tokenizer routes, at the root as vLLM serves them. */
@Controller()
@UseAuthScheme('Bearer')
export class TokenizeController {
  constructor(private readonly http: TokenizeHttpHandler) {}

  @Post('tokenize')
  @HttpCode(200)
  @ApiRoute("vLLM's tokenize: a prompt, or messages with the model's chat template, as token ids", {
    auth: 'Bearer',
    errors: ERRORS,
  })
  @ApiJsonBody(TokenizeRequestDto)
  @ApiJsonOk('{"tokens": [...], "count": n, "max_model_len": n}')
  tokenize(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenizeResponse> {
    return this.http.tokenize(body, caller, reply);
  }

  @Post('detokenize')
  @HttpCode(200)
  @ApiRoute("vLLM's detokenize: token ids back into text", { auth: 'Bearer', errors: ERRORS })
  @ApiJsonBody(DetokenizeRequestDto)
  @ApiJsonOk('{"prompt": "..."}')
  detokenize(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DetokenizeResponse> {
    return this.http.detokenize(body, caller, reply);
  }
}

/** The same routes under /v1, beside the OpenAI routes. */
@Controller('v1')
@UseAuthScheme('Bearer')
export class TokenizeV1Controller {
  constructor(private readonly http: TokenizeHttpHandler) {}

  @Post('tokenize')
  @HttpCode(200)
  @ApiRoute("vLLM's tokenize under /v1", { auth: 'Bearer', errors: ERRORS })
  @ApiJsonBody(TokenizeRequestDto)
  @ApiJsonOk('{"tokens": [...], "count": n, "max_model_len": n}')
  tokenize(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenizeResponse> {
    return this.http.tokenize(body, caller, reply);
  }

  @Post('detokenize')
  @HttpCode(200)
  @ApiRoute("vLLM's detokenize under /v1", { auth: 'Bearer', errors: ERRORS })
  @ApiJsonBody(DetokenizeRequestDto)
  @ApiJsonOk('{"prompt": "..."}')
  detokenize(
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DetokenizeResponse> {
    return this.http.detokenize(body, caller, reply);
  }
}
