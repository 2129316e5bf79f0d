import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OpenApiDocument } from './openapi.document.js';

const escape = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** The OpenAPI document, and a page that lists it: no external scripts, so it works offline. */
@Controller()
export class DocsController {
  private page: string | null = null;

  constructor(private readonly document: OpenApiDocument) {}

  @Get('openapi.json')
  @ApiOperation({ summary: 'This document (OpenAPI 3)' })
  @ApiOkResponse({ description: 'The OpenAPI document', schema: { type: 'object' } })
  openapi(): OpenAPIObject {
    return this.document.get();
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  @ApiOperation({ summary: 'This document as a page' })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'HTML', schema: { type: 'string' } })
  docs(): string {
    this.page ??= render(this.document.get());
    return this.page;
  }

  /** The root of the server points at the docs, so a browser opening it finds where to go. */
  @Get()
  @ApiExcludeEndpoint()
  root(): { object: 'conveyor'; docs: string; openapi: string; models: string } {
    return { object: 'conveyor', docs: '/docs', openapi: '/openapi.json', models: '/v1/models' };
  }
}

function render(document: OpenAPIObject): string {
  const rows = Object.entries(document.paths).flatMap(([path, ops]) =>
    Object.entries(ops as Record<string, { summary?: string; security?: unknown[] }>)
      .filter(([, op]) => typeof op === 'object' && op !== null && 'responses' in op)
      .map(
        ([method, op]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td><td>${escape(op.summary ?? '')}</td><td>${op.security?.length ? 'key' : 'public'}</td></tr>`,
      ),
  );
  return `<!doctype html><html><head><meta charset="utf-8"><title>Conveyor API</title>
<style>body{font:15px system-ui,sans-serif;margin:2rem;max-width:70rem}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}code{font-size:13px}</style>
</head><body><h1>Conveyor API</h1><p>${escape(document.info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Errors always have the shape <code>{"error": {"message", "type", "param", "code"}}</code>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What it does</th><th>Auth</th></tr></thead><tbody>${rows.join('')}</tbody></table></body></html>`;
}
