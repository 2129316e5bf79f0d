import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { checkBullmqSeam } from '@conveyor/bullmq-seam';
import { PinoNestLogger, shutDown } from '@conveyor/logging';
import { ConfigError, enabledLogLevels, loadConfig, type PlatformConfig } from '@conveyor/config';
import { startTracing, stopTracing } from '@conveyor/telemetry';
import { AppModule } from './app.module.js';
import { DrainService } from './platform/drain.service.js';
import { BackgroundResponses } from './responses/background-responses.js';
import { FileStoreCheck, FileStoreMismatch, STORE_HOLD_MS } from './platform/file-store.check.js';
import { PlatformMetrics } from './metrics/platform-metrics.service.js';
import { BullMqJobQueue } from './generation/bullmq-job-queue.adapter.js';
import { mountDashboardHint, mountQueueDashboard } from './admin/queue-dashboard.js';
import { QUEUE_DASHBOARD_PATH } from './admin/queue-dashboard.path.js';
import { buildOpenApiDocument, OpenApiDocument } from './docs/openapi.document.js';
import { installRequestChecks } from './http/request-checks.js';
import { traceRequests } from './http/trace-requests.js';
import { httpServerOptions } from './http/server-options.js';
import { assertCanListen, ListenProblem, listenProblem } from './http/listen-problem.js';

/** How long closing the app (its Redis connections, queues and servers) may take once replies are drained. */
const CLOSE_DEADLINE_MS = 5000;

async function bootstrap(config: PlatformConfig): Promise<void> {
  const adapter = new FastifyAdapter({
    ...httpServerOptions(config.api),
    bodyLimit: config.api.bodyLimitBytes,
    // Uploads stream to the file store; the store enforces the size limit itself.
    multipart: { limits: { files: 1, fileSize: config.batch.maxFileBytes + 1 }, throwFileSizeLimit: false },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forConfig(config), adapter, {
    logger:
      config.logFormat === 'json' ? new PinoNestLogger('api', config.logLevel) : enabledLogLevels(config.logLevel),
    // Fastify parses bodies itself (http/request-checks.ts); Nest's form parser would take form-encoded bodies,
    // which a page on any site can send.
    bodyParser: false,
  });
  app.get(OpenApiDocument).publish(buildOpenApiDocument(app));
  const fastify = app.getHttpAdapter().getInstance();
  // First of the hooks, so a refused request is in the trace too.
  traceRequests(fastify);
  // Every answer counts, by route pattern (not raw URL, which would explode the label set).
  const metrics = app.get(PlatformMetrics);
  fastify.addHook('onResponse', async (request, reply) => {
    metrics.requests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    });
  });
  // Host names, body types and body deadlines, checked before any route (and the queue dashboard) runs.
  installRequestChecks(fastify, config.api);
  const logger = new Logger('Api');
  if (config.adminKeySha256) {
    const jobs = app.get(BullMqJobQueue);
    await mountQueueDashboard(fastify, () => jobs.all(), config.adminKeySha256);
    logger.log(`Queue dashboard at ${QUEUE_DASHBOARD_PATH} (admin key required)`);
  } else {
    await mountDashboardHint(fastify);
  }
  await checkFileStore(app.get(FileStoreCheck), logger);
  try {
    await app.listen(config.api.port, config.api.host);
  } catch (err) {
    const problem = listenProblem(err as NodeJS.ErrnoException, config.api);
    if (!problem) throw err;
    // Taken after the check above: the same one line.
    console.error(problem);
    await shutDown(
      [{ name: 'closing connections', run: () => app.close(), deadlineMs: CLOSE_DEADLINE_MS }],
      logger,
      () => process.exit(1),
    );
    return;
  }
  logger.log(`Conveyor API listening on http://${config.api.host}:${config.api.port} (OpenAI routes under /v1)`);
  // SIGTERM/SIGINT: not ready at once, let open replies finish (or end them cleanly), then exit. Each step has a
  // deadline: with Redis gone, closing its connections would wait for a reconnect that never comes.
  const shutdown = (signal: string) => {
    logger.log(`${signal}: draining`);
    const drain = app.get(DrainService);
    const background = app.get(BackgroundResponses);
    void shutDown(
      [
        // Background responses are not waited for: another replica follows them on, from Redis.
        { name: 'handing over background responses', run: () => background.handOver(), deadlineMs: 5000 },
        { name: 'draining open replies', run: () => drain.drain(), deadlineMs: config.api.shutdownGraceMs + 1000 },
        { name: 'closing connections', run: () => app.close(), deadlineMs: CLOSE_DEADLINE_MS },
        { name: 'exporting the last spans', run: () => stopTracing(), deadlineMs: CLOSE_DEADLINE_MS },
      ],
      logger,
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/**
 * Refuses to start beside live replicas that share this Redis prefix but not this file store. A record
 * left by a replica that crashed lapses within STORE_HOLD_MS, so a mismatch is tried again until then
 * before the API gives up. When Redis or the store cannot be reached yet, the API starts anyway (and
 * answers 503 while Redis is away); its batch runner drives no batch until the check passes.
 */
async function checkFileStore(check: FileStoreCheck, logger: Logger): Promise<void> {
  const giveUpAt = Date.now() + STORE_HOLD_MS + 1000;
  let told = false;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
    });
    try {
      await Promise.race([check.verify(), late]);
      return;
    } catch (err) {
      if (!(err instanceof FileStoreMismatch)) {
        logger.warn(
          `The file store could not be checked against Redis yet (${(err as Error).message}); batches wait for it.`,
        );
        return;
      }
      if (Date.now() >= giveUpAt) {
        logger.error(err.message);
        process.exit(1);
      }
      if (!told)
        logger.warn(
          'Another file store is recorded for this Redis prefix: waiting for it to lapse, in case the replica ' +
            `that holds it has crashed (at most ${(STORE_HOLD_MS + 1000) / 1000} s)`,
        );
      told = true;
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      clearTimeout(timer);
    }
  }
}

// One line, before anything touches the queues: BullMQ's internals are read as the one version the seam knows.
const bullmqProblem = checkBullmqSeam();
if (bullmqProblem) {
  console.error(bullmqProblem);
  process.exit(1);
}
let config: PlatformConfig;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
try {
  await assertCanListen(config.api.host, config.api.port);
} catch (err) {
  if (!(err instanceof ListenProblem)) throw err;
  // One line, as configuration errors are: a stack trace says nothing an operator can act on.
  console.error(err.message);
  process.exit(1);
}
// Before the app is built: BullMQ's queues take their telemetry when they are made.
startTracing(config.tracing, 'conveyor-api');
await bootstrap(config);
