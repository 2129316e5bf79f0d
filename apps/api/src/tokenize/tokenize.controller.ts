import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DetokenizeResponse, TokenizeResponse } from '@conveyor/openai';
import { DetokenizeRequestDto, TokenizeRequestDto } from '@conveyor/protocol';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { TokenizeHttpHandler } from './tokenize-http.handler.js';

const ERRORS = [400, 401, 404, 413, 429, 503, 504];

/**
 * vLLM's two tokenizer routes, `/tokenize` and `/detokenize`, with the summaries their place documents them
 * by. A class per call: route metadata lives on the methods, so each prefix needs methods of its own.
 */
function tokenizerRoutes(summaries: { tokenize: string; detokenize: string }) {
  @UseAuthScheme('Bearer')
  class TokenizerRoutes {
    constructor(private readonly http: TokenizeHttpHandler) {}

    @Post('tokenize')
    @HttpCode(200)
    @ApiRoute(summaries.tokenize, { auth: 'Bearer', errors: ERRORS })
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
    @ApiRoute(summaries.detokenize, { auth: 'Bearer', errors: ERRORS })
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
  return TokenizerRoutes;
}

/** vLLM's tokenizer routes, at the root as vLLM serves them. */
@Controller()
export class TokenizeController extends tokenizerRoutes({
  tokenize: "vLLM's tokenize: a prompt, or messages with the model's chat template, as token ids",
  detokenize: "vLLM's detokenize: token ids back into text",
}) {}

/** The same routes under /v1, beside the OpenAI routes. */
@Controller('v1')
export class TokenizeV1Controller extends tokenizerRoutes({
  tokenize: "vLLM's tokenize under /v1",
  detokenize: "vLLM's detokenize under /v1",
}) {}
