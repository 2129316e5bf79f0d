import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { RequestMethod } from '@nestjs/common';
import { loadConfig } from '@conveyor/config';
import { AppModule } from '../app.module.js';
import { QUEUE_DASHBOARD_PATH } from '../admin/queue-dashboard.path.js';
import { OPENAPI_DOCUMENT } from './openapi.document.js';

/** `:id`, `*` and `{file_id}` all become `{}`, so routes and documented paths compare by shape. */
const shape = (path: string) => ('/' + path).replace(/\/+/g, '/').replace(/\/$/, '').replace(/:[^/]+|\{[^}]+\}|\*/g, '{}') || '/';

describe('OpenAPI document', () => {
  it('documents every route the API serves, and nothing it does not', () => {
    const controllers = AppModule.forConfig(loadConfig({})).controllers ?? [];
    // The dashboard is a Fastify plugin mounted beside Nest's controllers.
    const routes = new Set<string>([`GET ${QUEUE_DASHBOARD_PATH}`]);
    for (const controller of controllers) {
      const base = Reflect.getMetadata('path', controller) as string;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        const method = Reflect.getMetadata('method', handler) as RequestMethod | undefined;
        if (method === undefined || name === 'constructor') continue;
        routes.add(`${RequestMethod[method]} ${shape(`${base}/${Reflect.getMetadata('path', handler) as string}`)}`);
      }
    }
    const documented = new Set(
      Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${shape(path)}`)),
    );
    expect(routes.size).toBeGreaterThan(15);
    expect([...routes].sort()).toEqual([...documented].sort());
  });
});
