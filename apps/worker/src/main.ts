import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, enabledLogLevels, loadConfig, type PlatformConfig } from '@conveyor/config';
import { WorkerModule } from './worker.module.js';

let config: PlatformConfig;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}

try {
  const app = await NestFactory.createApplicationContext(WorkerModule.forDeployment(config, config.deployments[0]), {
    logger: enabledLogLevels(config.logLevel),
  });
  // SIGTERM/SIGINT: stop taking jobs, finish the ones in hand, then exit.
  app.enableShutdownHooks();
} catch (err) {
  new Logger('Worker').error(`Worker failed to start: ${(err as Error).message}`);
  process.exit(1);
}
