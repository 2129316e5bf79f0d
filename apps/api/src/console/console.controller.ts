import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { loadConsoleAssets, type ConsoleAsset } from './console-assets.js';

/**
 * The console: one page and its files, served by the API itself (no server of its own, nothing from
 * outside). The page asks for a key and sends it on each API call it makes from the browser; nothing
 * here needs one, as the page holds no data until the API gives it some.
 */
@Controller('console')
export class ConsoleController {
  private readonly assets = loadConsoleAssets();

  @Get()
  @ApiOperation({ summary: 'The console: batches, usage, keys and the fleet in a browser (it asks for a key)' })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'HTML', schema: { type: 'string' } })
  page(@Res() reply: FastifyReply): void {
    this.send(reply, this.assets.get('index.html')!);
  }

  @Get('assets/:name')
  @ApiOperation({ summary: "A file of the console's page (its script, styles, chart library)" })
  @ApiParam({ name: 'name', description: 'console.js, console.css, uPlot.iife.min.js or uPlot.min.css' })
  @ApiProduces('text/javascript', 'text/css')
  @ApiOkResponse({ description: 'The file', schema: { type: 'string' } })
  @ApiResponse({ status: 404, description: 'No such file' })
  asset(@Param('name') name: string, @Res() reply: FastifyReply): void {
    const asset = this.assets.get(name);
    if (!asset || name === 'index.html')
      throw new OpenAiHttpError(404, 'not_found_error', `No console file ${name}.`, null);
    this.send(reply, asset);
  }

  private send(reply: FastifyReply, { body, contentType }: ConsoleAsset): void {
    void reply
      .header('content-type', contentType)
      // The page's scripts are its own files: nothing inline, nothing from elsewhere.
      .header(
        'content-security-policy',
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'",
      )
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(body);
  }
}
