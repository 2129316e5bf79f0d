import { SetMetadata } from '@nestjs/common';

/**
 * The Authorization prefix a route family expects, as each deployment form
 * documents it: `Bearer` on /v1, `Api-Key` on the hosted predict route, `Key`
 * on org/app routes. Routes without one (health) are public.
 */
export type AuthScheme = 'Bearer' | 'Api-Key' | 'Key';

export const AUTH_SCHEME = 'conveyor:auth-scheme';

/**
 * `also`: prefixes a route family takes besides its own. Anthropic's clients send their key as
 * `Authorization: Bearer`, so the hosted Messages routes take it beside `Key`.
 */
export const UseAuthScheme = (scheme: AuthScheme, ...also: AuthScheme[]) =>
  SetMetadata(AUTH_SCHEME, [scheme, ...also] as readonly AuthScheme[]);
