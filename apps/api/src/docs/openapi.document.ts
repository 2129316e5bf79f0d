import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { QUEUE_DASHBOARD_PATH } from '../admin/queue-dashboard.path.js';

const DESCRIPTION =
  'Queue-based, OpenAI-compatible LLM inference. Every route but health, readiness, metrics and docs takes ' +
  'credentials when API keys are configured. Errors always have the shape {"error": {"message", "type", "param", "code"}}.';

/**
 * The API's OpenAPI 3 document, built from the controllers' routes and the request classes'
 * fields and validation rules, so it cannot say other than what the routes accept.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Conveyor')
    .setVersion('0.1.0')
    .setDescription(DESCRIPTION)
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'OpenAI routes under /v1: `Authorization: Bearer <key>`' },
      'bearer',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'Hosted routes: `Api-Key <key>` (predict) or `Key <key>` (org/app, private apps only)',
      },
      'apiKey',
    )
    .addBasicAuth(
      {
        type: 'http',
        scheme: 'basic',
        description: 'Queue dashboard: the admin key as the Basic password (any user), or `Bearer <admin key>`',
      },
      'admin',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['message', 'type', 'param', 'code'],
            properties: {
              message: { type: 'string' },
              type: { type: 'string' },
              param: { type: 'string', nullable: true },
              code: { type: 'string', nullable: true },
            },
          },
        },
      },
    },
  };
  // Model ids may contain '/': the route takes the rest of the path, which the document names `model`.
  const models = document.paths['/v1/models/{path}'];
  if (models?.get) {
    delete document.paths['/v1/models/{path}'];
    models.get.parameters = (models.get.parameters ?? []).filter((p) => !('name' in p) || p.name !== '*');
    document.paths['/v1/models/{model}'] = models;
  }
  hostedAppParamsFirst(document);
  addEdgeRefusals(document);
  // The dashboard is a Fastify plugin mounted beside Nest's controllers.
  document.paths[QUEUE_DASHBOARD_PATH] = {
    get: {
      summary:
        'Queue dashboard (Bull Board) over every deployment queue; served only when ADMIN_KEY or ADMIN_KEY_SHA256 is set',
      security: [{ admin: [] }],
      responses: {
        '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } },
        '401': {
          description: 'Missing or wrong admin key',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  };
  addEdgeRefusals(document, [QUEUE_DASHBOARD_PATH]);
  return document;
}

/**
 * The hosted app form declares `org` and `app` once for its controllers, which the generator lists after a
 * route's own parameters; they lead, as they do in the path.
 */
function hostedAppParamsFirst(document: OpenAPIObject): void {
  const leads = (p: object) => 'in' in p && p.in === 'path' && 'name' in p && (p.name === 'org' || p.name === 'app');
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/{org}/{app}/')) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const parameters = item[method]?.parameters;
      if (parameters) item[method]!.parameters = [...parameters.filter(leads), ...parameters.filter((p) => !leads(p))];
    }
  }
}

/**
 * What the HTTP edge answers for any path before a route runs (http/client-errors.ts,
 * http/request-checks.ts): a request that is not well-formed HTTP or names a malformed URL (400), one
 * that did not arrive in time (408), a URL segment too long (414), a request line and headers too
 * large (431). Every operation can get them, so each lists them, in the OpenAI error shape.
 */
const EDGE_REFUSALS: Readonly<Record<string, string>> = {
  '400': 'Not well-formed HTTP, or a malformed URL (refused before the route runs)',
  '408': 'The request did not arrive within the time allowed',
  '414': 'A segment of the URL is too long',
  '431': 'The request line and headers are too large',
};

function addEdgeRefusals(document: OpenAPIObject, only?: string[]): void {
  const error = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  for (const [path, item] of Object.entries(document.paths)) {
    if (only && !only.includes(path)) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      for (const [status, description] of Object.entries(EDGE_REFUSALS))
        operation.responses[status] ??= { description, content: error };
    }
  }
}

/** The document, once built at start-up, for the docs routes to serve. */
export class OpenApiDocument {
  private document: OpenAPIObject | null = null;

  publish(document: OpenAPIObject): void {
    this.document = document;
  }

  get(): OpenAPIObject {
    if (!this.document) throw new Error('The OpenAPI document is built when the API starts.');
    return this.document;
  }
}
