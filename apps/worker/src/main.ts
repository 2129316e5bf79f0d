import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { checkBullmqSeam } from '@conveyor/bullmq-seam';
import { checkNodeLlamaCppSeam } from '@conveyor/engine';
import { PinoNestLogger, shutDown } from '@conveyor/logging';
import {
  ConfigError,
  enabledLogLevels,
  loadConfig,
  type DeploymentConfig,
  type PlatformConfig,
} from '@conveyor/config';
import { startTracing, stopTracing } from '@conveyor/telemetry';
import { selectDeployments } from './worker-options.js';
import { WorkerModule } from './worker.module.js';

// One line, before a model loads: the takeover and the slot gate use BullMQ's internals as the seam knows
// them, and the engine node-llama-cpp's as its own seam does.
const seamProblem = checkBullmqSeam() ?? checkNodeLlamaCppSeam();
if (seamProblem) {
  console.error(seamProblem);
  process.exit(1);
}
let config: PlatformConfig;
let deployments: DeploymentConfig[];
try {
  config = loadConfig();
  deployments = selectDeployments(config, process.argv.slice(2), process.env);
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `Invalid worker options: ${(err as Error).message}`);
  process.exit(1);
}

// Before the app is built: BullMQ's workers take their telemetry when they are made.
startTracing(config.tracing, 'conveyor-worker');
try {
  const app = await NestFactory.createApplicationContext(WorkerModule.forDeployments(config, deployments), {
    logger:
      config.logFormat === 'json' ? new PinoNestLogger('worker', config.logLevel) : enabledLogLevels(config.logLevel),
  });
  // SIGTERM/SIGINT: stop announcing, finish (or hand back) the jobs in hand, then exit. Closing has a deadline:
  // with Redis gone, handing jobs back and closing connections would wait for a reconnect that never comes.
  const shutdown = (signal: string) => {
    const logger = new Logger('Worker');
    logger.log(`${signal}: taking no new jobs, finishing the ones in hand`);
    void shutDown(
      [
        {
          name: 'finishing jobs and closing',
          run: () => app.close(),
          deadlineMs: config.worker.shutdownGraceMs + 5000,
        },
        { name: 'exporting the last spans', run: () => stopTracing(), deadlineMs: 5000 },
      ],
      logger,
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  if (config.worker.testStallMs > 0) {
    // For tests: a busy main thread (generation, Redis, BullMQ's lock renewal all wait), the heartbeat's thread running on.
    const ms = config.worker.testStallMs;
    process.on('SIGUSR2', () => {
      new Logger('Worker').warn(`SIGUSR2: blocking the main thread for ${ms} ms`);
      const until = Date.now() + ms;
      while (Date.now() < until);
    });
  }
} catch (err) {
  new Logger('Worker').error(`Worker failed to start: ${(err as Error).message}`);
  process.exit(1);
}
