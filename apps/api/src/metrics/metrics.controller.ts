import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import { PlatformMetrics } from './platform-metrics.service.js';

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: PlatformMetrics) {}

  /** Prometheus scrape endpoint; public like the health routes (put it behind your network policy). */
  @Get()
  @ApiOperation({ summary: 'Prometheus metrics' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format', schema: { type: 'string' } })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
