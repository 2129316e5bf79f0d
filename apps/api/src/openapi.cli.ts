// Writes the API's OpenAPI document, or checks that a committed copy still matches the code:
//   node dist/apps/api/src/openapi.cli.js --write apps/api/openapi.json
//   node dist/apps/api/src/openapi.cli.js --check apps/api/openapi.json   (exit 1 when it drifted)
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { generatedFileCli, loadConfig } from '@conveyor/config';
import { AppModule } from './app.module.js';
import { buildOpenApiDocument } from './docs/openapi.document.js';

await generatedFileCli(
  'openapi.cli.js',
  async () => {
    // Preview mode reads routes and types without creating a single provider: no Redis, no model.
    const app = await NestFactory.create(AppModule.forConfig(loadConfig({})), new FastifyAdapter(), {
      preview: true,
      logger: false,
    });
    const text = JSON.stringify(buildOpenApiDocument(app), null, 2) + '\n';
    await app.close();
    return text;
  },
  { source: 'the routes and request classes', matched: 'the code', command: 'npm run openapi' },
);
