import { resolve } from 'node:path';
import type { ApiKeyConfig, DeploymentConfig, ModelNamesConfig } from '../config.types.js';
import type { EnvReader } from '../env/env-reader.js';
import { checkDeployments, envField, fileField } from './check-deployments.js';
import type { DeploymentDefaults } from './deployment-defaults.js';
import { deploymentFromEnv } from './deployment-from-env.js';
import { deploymentsFromFile } from './deployments-from-file.js';
import { checkModelNames, parseModelAliases } from './model-names.js';

interface ReadDeployments {
  deployments: DeploymentConfig[];
  apiKeys: ApiKeyConfig[];
  modelsDir: string;
  modelNames: ModelNamesConfig;
}

/**
 * The deployments served: those of the file CONVEYOR_CONFIG names, or the one the environment
 * describes. `envKeys` are API_KEYS'; the file's keys join them, and private apps need one of either.
 * The model names that reach them are the file's aliases, then MODEL_ALIASES', checked against them.
 */
export function readDeployments(r: EnvReader, defaults: DeploymentDefaults, envKeys: ApiKeyConfig[]): ReadDeployments {
  const modelsDir = resolve(r.string('MODELS_DIR'));
  const context = { named: (name: string) => r.named(name), modelsDir };
  const envAliases = parseModelAliases(r.optionalString('MODEL_ALIASES'), r.problems);
  const file = r.optionalString('CONVEYOR_CONFIG');
  if (!file) {
    const deployments = [deploymentFromEnv(r, defaults, context)];
    checkDeployments(deployments, envKeys, r.problems, envField);
    const modelNames = { aliases: envAliases, defaultDeployment: null };
    checkModelNames(modelNames, deployments, r.problems, () => 'MODEL_ALIASES');
    return { deployments, apiKeys: envKeys, modelsDir, modelNames };
  }
  if (r.optionalString('MODEL'))
    r.problems.push('MODEL and CONVEYOR_CONFIG are exclusive: declare the model in the file');
  const fromFile = deploymentsFromFile(file, defaults, context, r.problems);
  const apiKeys = [...envKeys, ...fromFile.apiKeys];
  checkDeployments(fromFile.deployments, apiKeys, r.problems, fileField);
  const fileAliases = fromFile.modelNames.aliases;
  const modelNames = { ...fromFile.modelNames, aliases: [...fileAliases, ...envAliases] };
  checkModelNames(modelNames, fromFile.deployments, r.problems, (alias) => {
    if (alias === null) return 'defaultDeployment';
    const i = modelNames.aliases.indexOf(alias);
    return i < fileAliases.length ? `modelAliases[${i}]` : 'MODEL_ALIASES';
  });
  return { deployments: fromFile.deployments, apiKeys, modelsDir, modelNames };
}
