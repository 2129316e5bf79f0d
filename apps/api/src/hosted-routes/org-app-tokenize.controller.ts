import { Body, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { DetokenizeResponse, TokenizeResponse } from '@conveyor/openai';
import { DetokenizeRequestDto, TokenizeRequestDto } from '@conveyor/protocol';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { TokenizeHttpHandler } from '../tokenize/tokenize-http.handler.js';
import { HostedApp, HostedAppController } from './hosted-app.decorator.js';

/**
 * The serverless app-host form of vLLM's tokenizer routes, one deployment per app. A key comes as
 * `Authorization: Key` (or x-api-key), as on the hosted OpenAI routes: `Bearer` is for the Messages
 * routes only, which Anthropic's clients call with it.
 */
@HostedAppController()
export class OrgAppTokenizeController {
  constructor(private readonly tokenizer: TokenizeHttpHandler) {}

  @Post('tokenize')
  @HttpCode(200)
  @ApiRoute("Hosted app form: vLLM's tokenize (`Key <key>` when private)", {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(TokenizeRequestDto)
  @ApiJsonOk('{"tokens": [...], "count": n, "max_model_len": n}')
  tokenize(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenizeResponse> {
    return this.tokenizer.tokenize(body, caller, reply, app);
  }

  @Post('detokenize')
  @HttpCode(200)
  @ApiRoute("Hosted app form: vLLM's detokenize (`Key <key>` when private)", {
    auth: 'Key',
    errors: [400, 401, 404, 413, 429, 503, 504],
  })
  @ApiJsonBody(DetokenizeRequestDto)
  @ApiJsonOk('{"prompt": "..."}')
  detokenize(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DetokenizeResponse> {
    return this.tokenizer.detokenize(body, caller, reply, app);
  }
}
