import { Controller, Get, Header } from '@nestjs/common';
import { PlatformMetrics } from './platform-metrics.service.js';

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: PlatformMetrics) {}

  /** Prometheus scrape endpoint; public like the health routes (put it behind your network policy). */
  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
