import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PinoNestLogger } from '@conveyor/logging';
import {
  ConfigError,
  enabledLogLevels,
  loadConfig,
  type DeploymentConfig,
  type PlatformConfig,
} from '@conveyor/config';
import { selectDeployments } from './worker-options.js';
import { WorkerModule } from './worker.module.js';

let config: PlatformConfig;
let deployments: DeploymentConfig[];
try {
  config = loadConfig();
  deployments = selectDeployments(config, process.argv.slice(2), process.env);
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `Invalid worker options: ${(err as Error).message}`);
  process.exit(1);
}

try {
  const app = await NestFactory.createApplicationContext(WorkerModule.forDeployments(config, deployments), {
    logger:
      config.logFormat === 'json' ? new PinoNestLogger('worker', config.logLevel) : enabledLogLevels(config.logLevel),
  });
  // SIGTERM/SIGINT: stop announcing, finish (or hand back) the jobs in hand, then exit 0.
  const shutdown = (signal: string) => {
    new Logger('Worker').log(`${signal}: taking no new jobs, finishing the ones in hand`);
    void app.close().then(
      () => process.exit(0),
      (err: Error) => {
        new Logger('Worker').error(`Shutdown failed: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (err) {
  new Logger('Worker').error(`Worker failed to start: ${(err as Error).message}`);
  process.exit(1);
}
