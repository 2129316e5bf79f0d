import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { RequestMethod } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { loadConfig } from '@conveyor/config';
import { AppModule } from '../app.module.js';
import { QUEUE_DASHBOARD_PATH } from '../admin/queue-dashboard.path.js';

/** The committed document; test/docs.e2e-spec.ts checks it still matches what the built API generates. */
const document = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../openapi.json'), 'utf8')) as OpenAPIObject;

/** `:id`, `*` and `{file_id}` all become `{}`, so routes and documented paths compare by shape. */
const shape = (path: string) =>
  ('/' + path)
    .replace(/\/+/g, '/')
    .replace(/\/$/, '')
    .replace(/:[^/]+|\{[^}]+\}|\*/g, '{}') || '/';

/** A class's method names, inherited ones included: a controller may take its routes from a base class. */
function methodNames(prototype: object): Set<string> {
  const names = new Set<string>();
  for (let p = prototype; p !== Object.prototype; p = Object.getPrototypeOf(p) as object)
    for (const name of Object.getOwnPropertyNames(p)) names.add(name);
  return names;
}

describe('OpenAPI document', () => {
  it('documents every route the API serves, and nothing it does not', () => {
    const controllers = AppModule.forConfig(loadConfig({})).controllers ?? [];
    // The dashboard is a Fastify plugin mounted beside Nest's controllers; the root only points at the docs.
    const routes = new Set<string>([`GET ${QUEUE_DASHBOARD_PATH}`]);
    for (const controller of controllers) {
      const base = Reflect.getMetadata('path', controller) as string;
      for (const name of methodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata('method', handler) as RequestMethod | undefined;
        if (method === undefined || Reflect.getMetadata('swagger/apiExcludeEndpoint', handler)) continue;
        routes.add(`${RequestMethod[method]} ${shape(`${base}/${Reflect.getMetadata('path', handler) as string}`)}`);
      }
    }
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${shape(path)}`),
      ),
    );
    expect(routes.size).toBeGreaterThan(15);
    expect([...routes].sort()).toEqual([...documented].sort());
  });

  it('describes the chat body from its class: required fields, ranges, the unions spelled out', () => {
    const schemas = document.components?.schemas ?? {};
    const chat = schemas.ChatCompletionRequestDto as { required: string[]; properties: Record<string, object> };
    expect(chat.required.sort()).toEqual(['messages', 'model']);
    expect(chat.properties.temperature).toMatchObject({ type: 'number', minimum: 0, maximum: 2, nullable: true });
    expect(chat.properties.min_p).toMatchObject({ minimum: 0, maximum: 1 });
    expect(chat.properties.stop).toHaveProperty('oneOf');
    const message = schemas.ChatMessageDto as { properties: Record<string, object> };
    expect(message.properties.content).toHaveProperty('oneOf');
    expect(message.properties.role).toMatchObject({ enum: ['system', 'developer', 'user', 'assistant', 'tool'] });
  });

  it("lists the HTTP edge's refusals (400, 408, 414, 431) on every operation, in the error shape", () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, { responses: Record<string, object> }>)) {
        for (const status of ['400', '408', '414', '431']) {
          const response = operation.responses[status] as { content?: Record<string, { schema?: object }> } | undefined;
          const schemas = Object.values(response?.content ?? {}).map((c) => c.schema);
          expect({ at: `${method} ${path}`, status, schemas }).toEqual({
            at: `${method} ${path}`,
            status,
            schemas: expect.arrayContaining([{ $ref: '#/components/schemas/Error' }]),
          });
        }
      }
    }
  });

  it('names the credentials each route family takes', () => {
    expect(document.paths['/v1/chat/completions']?.post?.security).toEqual([{ bearer: [] }]);
    expect(document.paths['/environments/production/predict']?.post?.security).toEqual([{ apiKey: [] }]);
    expect(document.paths['/health']?.get?.security).toBeUndefined();
  });
});
