import { createServer, type Server } from 'node:http';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { engineMetrics } from '@conveyor/engine';

/**
 * The worker's Prometheus metrics at `/metrics` on `WORKER_METRICS_PORT` (none when 0): what its engines
 * count and the process's own figures. The API's /metrics counts requests and tokens for the whole
 * fleet; what only a worker sees (its llama-server child's failures, say) is counted here.
 */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private readonly process = new Registry();
  private server: Server | null = null;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.worker.metricsPort;
    if (!port) return;
    collectDefaultMetrics({ register: this.process, prefix: 'conveyor_worker_' });
    const registry = Registry.merge([this.process, engineMetrics]);
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    });
    await new Promise<void>((listening, failed) => {
      server.once('error', failed);
      server.listen(port, '0.0.0.0', () => listening());
    });
    this.server = server;
    this.logger.log(`Serving metrics at http://0.0.0.0:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeAllConnections();
    await closed;
  }
}
