import { Body, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import type { Message, MessageTokensCount } from '@conveyor/openai';
import { MessagesPromptDto, MessagesRequestDto } from '@conveyor/protocol';
import { Caller } from '../auth/caller.decorator.js';
import { ApiJsonBody, ApiJsonOk, ApiJsonOrEvents, ApiRoute } from '../docs/api-docs.decorators.js';
import { Speaks } from '../dialects/speaks.decorator.js';
import { MessagesHttpHandler } from '../messages/messages-http.handler.js';
import { HostedApp, HostedAppController, hostedPath } from './hosted-app.decorator.js';
import { anthropicMessages } from '../messages/anthropic-messages.dialect.js';

const ERRORS = [400, 401, 404, 413, 429, 504, 529];

/**
 * The serverless app-host form of Anthropic's Messages routes, one deployment per app. Besides `Key`, a
 * key comes as Anthropic's clients send it: `Authorization: Bearer` or `x-api-key`.
 */
@HostedAppController('Bearer')
@Speaks(anthropicMessages)
export class OrgAppMessagesController {
  constructor(private readonly messages: MessagesHttpHandler) {}

  @Post(hostedPath(anthropicMessages))
  @HttpCode(200)
  @ApiRoute("Hosted app form: Anthropic's Messages (`Key <key>` or x-api-key when private)", {
    auth: 'Key',
    errors: ERRORS,
  })
  @ApiJsonBody(MessagesRequestDto)
  @ApiJsonOrEvents('message')
  create(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Message | void> {
    return this.messages.create(body, caller, reply, app);
  }

  @Post('messages/count_tokens')
  @HttpCode(200)
  @ApiRoute("Hosted app form: Anthropic's token count (`Key <key>` or x-api-key when private)", {
    auth: 'Key',
    errors: ERRORS,
  })
  @ApiJsonBody(MessagesPromptDto)
  @ApiJsonOk('{"input_tokens": n}')
  countTokens(
    @HostedApp() app: DeploymentConfig,
    @Body() body: unknown,
    @Caller() caller: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MessageTokensCount> {
    return this.messages.countTokens(body, caller, reply, app);
  }
}
