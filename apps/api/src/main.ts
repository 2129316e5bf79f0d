import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoNestLogger } from '@conveyor/logging';
import { ConfigError, enabledLogLevels, loadConfig, type PlatformConfig } from '@conveyor/config';
import { AppModule } from './app.module.js';
import { DrainService } from './platform/drain.service.js';
import { PlatformMetrics } from './metrics/platform-metrics.service.js';
import { BullChatQueue } from './queue/bullmq-chat-queue.adapter.js';
import { mountQueueDashboard } from './admin/queue-dashboard.js';
import { QUEUE_DASHBOARD_PATH } from './admin/queue-dashboard.path.js';


async function bootstrap(config: PlatformConfig): Promise<void> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.api.bodyLimitBytes,
    // Uploads stream to the file store; the store enforces the size limit itself.
    multipart: { limits: { files: 1, fileSize: config.batch.maxFileBytes + 1 }, throwFileSizeLimit: false },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forConfig(config), adapter, {
    logger: config.logFormat === 'json' ? new PinoNestLogger('api', config.logLevel) : enabledLogLevels(config.logLevel),
    // Fastify parses JSON itself; Nest's extra form parser would swallow JSON sent with curl's default form type.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // Hosted clients often omit Content-Type: treat any body as JSON, with the same prototype-poisoning guard.
  // Every answer counts, by route pattern (not raw URL, which would explode the label set).
  const metrics = app.get(PlatformMetrics);
  fastify.addHook('onResponse', async (request, reply) => {
    metrics.requests.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) });
  });
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('*', { parseAs: 'string' }, fastify.getDefaultJsonParser('error', 'error'));
  const logger = new Logger('Api');
  if (config.adminKeySha256) {
    await mountQueueDashboard(fastify, app.get(BullChatQueue).all(), config.adminKeySha256);
    logger.log(`Queue dashboard at ${QUEUE_DASHBOARD_PATH} (admin key required)`);
  }
  await app.listen(config.api.port, config.api.host);
  logger.log(`Conveyor API listening on http://${config.api.host}:${config.api.port} (OpenAI routes under /v1)`);
  // SIGTERM/SIGINT: not ready at once, let open replies finish (or end them cleanly), then exit 0.
  const shutdown = (signal: string) => {
    logger.log(`${signal}: draining`);
    void app
      .get(DrainService)
      .drain()
      .then(() => app.close())
      .then(
        () => process.exit(0),
        (err: Error) => {
          logger.error(`Shutdown failed: ${err.message}`);
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

let config: PlatformConfig;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
await bootstrap(config);
