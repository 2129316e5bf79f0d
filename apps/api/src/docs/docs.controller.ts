import { Controller, Get, Header } from '@nestjs/common';
import { OPENAPI_DOCUMENT } from './openapi.document.js';

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** The OpenAPI document, and a page that lists it: no external scripts, so it works offline. */
@Controller()
export class DocsController {
  private readonly page = render();

  @Get('openapi.json')
  document(): typeof OPENAPI_DOCUMENT {
    return OPENAPI_DOCUMENT;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  docs(): string {
    return this.page;
  }
}

function render(): string {
  const rows = Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, ops]) =>
    Object.entries(ops as Record<string, { summary: string; security?: unknown[] }>).map(
      ([method, op]) =>
        `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td><td>${escape(op.summary)}</td><td>${op.security ? 'key' : 'public'}</td></tr>`,
    ),
  );
  return `<!doctype html><html><head><meta charset="utf-8"><title>Conveyor API</title>
<style>body{font:15px system-ui,sans-serif;margin:2rem;max-width:70rem}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}code{font-size:13px}</style>
</head><body><h1>Conveyor API</h1><p>${escape(OPENAPI_DOCUMENT.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Errors always have the shape <code>{"error": {"message", "type", "param", "code"}}</code>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What it does</th><th>Auth</th></tr></thead><tbody>${rows.join('')}</tbody></table></body></html>`;
}
