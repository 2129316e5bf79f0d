import { SetMetadata } from '@nestjs/common';

/**
 * The Authorization prefix a route family expects, as each deployment form
 * documents it: `Bearer` on /v1, `Api-Key` on the hosted predict route, `Key`
 * on org/app routes. Routes without one (health) are public.
 */
export type AuthScheme = 'Bearer' | 'Api-Key' | 'Key';

export const AUTH_SCHEME = 'conveyor:auth-scheme';

export const UseAuthScheme = (scheme: AuthScheme) => SetMetadata(AUTH_SCHEME, scheme);
