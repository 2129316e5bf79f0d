import { resolve } from 'node:path';
import type { ApiKeyConfig, DeploymentConfig } from '../config.types.js';
import type { EnvReader } from '../env/env-reader.js';
import { checkDeployments, envField, fileField } from './check-deployments.js';
import type { DeploymentDefaults } from './deployment-defaults.js';
import { deploymentFromEnv } from './deployment-from-env.js';
import { deploymentsFromFile } from './deployments-from-file.js';

/**
 * The deployments served: those of the file CONVEYOR_CONFIG names, or the one the environment
 * describes. `envKeys` are API_KEYS'; the file's keys join them, and private apps need one of either.
 */
export function readDeployments(
  r: EnvReader,
  defaults: DeploymentDefaults,
  envKeys: ApiKeyConfig[],
): { deployments: DeploymentConfig[]; apiKeys: ApiKeyConfig[]; modelsDir: string } {
  const modelsDir = resolve(r.string('MODELS_DIR'));
  const context = { named: (name: string) => r.named(name), modelsDir };
  const file = r.optionalString('CONVEYOR_CONFIG');
  if (!file) {
    const deployments = [deploymentFromEnv(r, defaults, context)];
    checkDeployments(deployments, envKeys, r.problems, envField);
    return { deployments, apiKeys: envKeys, modelsDir };
  }
  if (r.optionalString('MODEL'))
    r.problems.push('MODEL and CONVEYOR_CONFIG are exclusive: declare the model in the file');
  const fromFile = deploymentsFromFile(file, defaults, context, r.problems);
  const apiKeys = [...envKeys, ...fromFile.apiKeys];
  checkDeployments(fromFile.deployments, apiKeys, r.problems, fileField);
  return { deployments: fromFile.deployments, apiKeys, modelsDir };
}
