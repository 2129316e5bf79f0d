import 'reflect-metadata';
import { RouteConfig } from '@nestjs/platform-fastify';
import { addRouteConfig, ROUTE_CONFIG_METADATA } from './route-config.js';

/** A route handler of a fresh class, and the Fastify config the decorators gave it. */
function route() {
  class Routes {
    handle(): void {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, 'handle')!;
  const decorate = (decorator: MethodDecorator) => decorator(Routes.prototype, 'handle', descriptor);
  return { decorate, config: () => Reflect.getMetadata(ROUTE_CONFIG_METADATA, descriptor.value as object) as unknown };
}

describe('addRouteConfig', () => {
  it("reads the route config where Nest's RouteConfig keeps it", () => {
    const r = route();
    r.decorate(RouteConfig({ marker: 1 }));
    expect(r.config()).toEqual({ marker: 1 });
  });

  it('adds to the config another decorator set, in either order', () => {
    const r = route();
    r.decorate(RouteConfig({ marker: 1 }));
    r.decorate(addRouteConfig({ streamsBody: true }));
    r.decorate(addRouteConfig({ dialect: undefined, other: 'x' } as object));
    expect(r.config()).toEqual({ marker: 1, streamsBody: true, dialect: undefined, other: 'x' });
  });
});
