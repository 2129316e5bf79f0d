// Writes the API's OpenAPI document, or checks that a committed copy still matches the code:
//   node dist/apps/api/src/docs/openapi.cli.js --write apps/api/openapi.json
//   node dist/apps/api/src/docs/openapi.cli.js --check apps/api/openapi.json   (exit 1 when it drifted)
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { loadConfig } from '@conveyor/config';
import { AppModule } from '../app.module.js';
import { buildOpenApiDocument } from './openapi.document.js';

const [mode, path] = process.argv.slice(2);
if ((mode !== '--write' && mode !== '--check') || !path) {
  console.error('usage: openapi.cli.js --write|--check <path>');
  process.exit(2);
}
// Preview mode reads routes and types without creating a single provider: no Redis, no model.
const app = await NestFactory.create(AppModule.forConfig(loadConfig({})), new FastifyAdapter(), {
  preview: true,
  logger: false,
});
const text = JSON.stringify(buildOpenApiDocument(app), null, 2) + '\n';
await app.close();
if (mode === '--write') {
  writeFileSync(path, text);
  console.log(`Wrote ${path}`);
} else {
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // A missing copy is a drift like any other.
  }
  if (committed !== text) {
    console.error(`${path} does not match the routes and request classes: run npm run openapi and commit it.`);
    process.exit(1);
  }
  console.log(`${path} matches the code.`);
}
