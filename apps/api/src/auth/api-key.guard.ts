import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { ApiKeyStore } from './api-key.store.js';
import { AUTH_SCHEME, type AuthScheme } from './auth-scheme.decorator.js';
import { CALLER, type RequestWithCaller } from './caller.decorator.js';
import { RateLimiter, type RateDecision } from './rate-limiter.service.js';

const unauthorized = (message: string) =>
  new OpenAiHttpError(401, 'authentication_error', message, null, ErrorCode.invalidApiKey);

function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(d.limit),
    'x-ratelimit-remaining-requests': String(d.remaining),
    'x-ratelimit-reset-requests': `${d.resetSeconds}s`,
  };
}

/**
 * The key a request presents: its Authorization header in the route's scheme, or, where it sends none,
 * its `x-api-key` header (how Anthropic's clients send a key).
 */
function presentedKey(request: FastifyRequest, schemes: readonly AuthScheme[]): string {
  const scheme = schemes[0]!;
  const header = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  if (!header && typeof apiKey === 'string' && apiKey) return apiKey.trim();
  if (!header) {
    throw unauthorized(
      `Missing credentials: send the header "Authorization: ${scheme} <key>" (or "x-api-key: <key>").`,
    );
  }
  const space = header.indexOf(' ');
  const prefix = space > 0 ? header.slice(0, space) : '';
  if (!schemes.some((s) => s.toLowerCase() === prefix.toLowerCase())) {
    throw unauthorized(`Malformed Authorization header: this route expects "Authorization: ${scheme} <key>".`);
  }
  return header.slice(space + 1).trim();
}

/**
 * Checks the Authorization header (or x-api-key) in the scheme of the route's form, then
 * counts the request against the key's rate limit. The key itself is never
 * logged or passed on.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyStore,
    private readonly limiter: RateLimiter,
    private readonly registry: DeploymentRegistry,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const schemes = this.reflector.getAllAndOverride<readonly AuthScheme[] | undefined>(AUTH_SCHEME, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!schemes?.length || !(await this.keys.enabled())) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest<{ Params: { org?: string; app?: string } }>>();
    if (schemes[0] === 'Key') {
      // Only a public app is served without a key. An unknown app asks for one exactly as a private
      // app does, so names cannot be probed; with a valid key, the route answers an unknown app's 404.
      const { org = '', app = '' } = request.params;
      if (this.registry.findApp(org, app)?.auth === 'public') return true;
    }

    const key = await this.keys.match(presentedKey(request, schemes)).catch(() => {
      throw OpenAiHttpError.unavailable('The API keys cannot be read now; try again shortly.');
    });
    if (!key) throw unauthorized('Incorrect API key provided.');
    (request as RequestWithCaller)[CALLER] = key.name;

    const decision = await this.limiter.consume(key).catch(() => {
      throw OpenAiHttpError.unavailable('The rate limiter is unavailable; try again shortly.');
    });
    if (!decision) return true;
    const headers = rateHeaders(decision);
    if (!decision.allowed) {
      throw new OpenAiHttpError(
        429,
        'rate_limit_error',
        `Rate limit of ${decision.limit} requests exceeded for this key; retry in ${decision.resetSeconds} s.`,
        null,
        ErrorCode.rateLimitExceeded,
        {
          ...headers,
          'retry-after': String(decision.resetSeconds),
        },
      );
    }
    context.switchToHttp().getResponse<FastifyReply>().headers(headers);
    return true;
  }
}
