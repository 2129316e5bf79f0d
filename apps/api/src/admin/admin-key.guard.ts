import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { isAdminKey, presentedAdminKey } from './admin-credentials.js';

/**
 * Lets a request through only with the admin key (`Authorization: Bearer <admin key>`, as OpenAI's admin
 * routes take theirs, or HTTP Basic with the key as password). Without an admin key configured the
 * routes it guards are off, and say so.
 */
@Injectable()
export class AdminKeyGuard implements CanActivate {
  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const digest = this.config.adminKeySha256;
    if (!digest) {
      throw new OpenAiHttpError(
        404,
        'not_found_error',
        'The admin routes are off: start the API with ADMIN_KEY (or ADMIN_KEY_SHA256) set to serve them.',
        null,
        ErrorCode.adminDisabled,
      );
    }
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (isAdminKey(presentedAdminKey(request.headers.authorization), digest)) return true;
    throw new OpenAiHttpError(
      401,
      'authentication_error',
      'This route needs the admin key: "Authorization: Bearer <admin key>".',
      null,
      ErrorCode.invalidApiKey,
    );
  }
}
