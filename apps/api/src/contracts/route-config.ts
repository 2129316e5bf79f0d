import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyContextConfig } from 'fastify';

/**
 * Where `@RouteConfig()` keeps a route's Fastify config (@nestjs/platform-fastify's
 * FASTIFY_ROUTE_CONFIG_METADATA, which the package does not export; route-config.spec.ts holds it to
 * this name). Read here so that several decorators can each add to one route's config: `RouteConfig`
 * alone replaces it, and a controller's dialect, set on every route, wiped a route's own setting.
 */
export const ROUTE_CONFIG_METADATA = '__fastify_route_config__';

/** Adds `config` to the Fastify config of the route it decorates, keeping what other decorators put there. */
export function addRouteConfig(config: FastifyContextConfig): MethodDecorator {
  return (target, key, descriptor) => {
    const held = (Reflect.getMetadata(ROUTE_CONFIG_METADATA, descriptor.value as object) ?? {}) as FastifyContextConfig;
    RouteConfig({ ...held, ...config })(target, key, descriptor);
  };
}
