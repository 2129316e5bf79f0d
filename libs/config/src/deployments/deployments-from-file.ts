import { resolve } from 'node:path';
import type { ApiKeyConfig, DeploymentConfig, ModelNamesConfig } from '../config.types.js';
import { resolveEngine, type EngineContext, type EngineFieldNames } from '../engine-config.js';
import type { DeploymentDto } from '../file/deployments-file.dto.js';
import { readDeploymentsFile } from '../file/read-deployments-file.js';
import { promptCacheMode, type DeploymentDefaults } from './deployment-defaults.js';

/** Engine fields of the deployments file, by their path in it. */
const fileEngineFields = (i: number): EngineFieldNames => {
  const at = (field: string) => `deployments[${i}].${field}`;
  return {
    model: at('model'),
    task: at('task'),
    engine: at('engine'),
    mmproj: at('mmproj'),
    imageMaxTokens: at('imageMaxTokens'),
    vision: at('vision'),
    upstream: at('upstream'),
    upstreamUrl: at('upstream.url'),
    upstreamApiKey: at('upstream.apiKey'),
    upstreamApiKeyEnv: at('upstream.apiKeyEnv'),
    upstreamModel: at('upstream.model'),
    simulated: at('simulated'),
  };
};

function fromFile(
  d: DeploymentDto,
  i: number,
  defaults: DeploymentDefaults,
  context: EngineContext,
  problems: string[],
): DeploymentConfig {
  const task = d.task ?? 'generate';
  const served = resolveEngine(
    {
      model: d.model,
      task,
      engine: d.engine,
      mmproj: d.mmproj,
      imageMaxTokens: d.imageMaxTokens,
      vision: d.vision,
      upstream: d.upstream,
      simulated: d.simulated,
    },
    fileEngineFields(i),
    context,
    problems,
  );
  return {
    id: d.id,
    model: served.model,
    pool: d.pool ?? 'cpu',
    contextSize: d.contextSize ?? defaults.contextSize,
    promptCharsPerToken: d.promptCharsPerToken ?? defaults.promptCharsPerToken,
    parallel: d.parallel ?? defaults.parallel,
    threads: d.threads ?? defaults.threads,
    flashAttention: d.flashAttention ?? defaults.flashAttention,
    promptCache: d.promptCache === undefined ? defaults.promptCache : promptCacheMode(d.promptCache),
    promptCacheRam: d.promptCacheRam ?? defaults.promptCacheRam,
    defaults: d.defaults?.toPreset() ?? {},
    alias: d.alias ? { org: d.alias.org, app: d.alias.app } : undefined,
    auth: d.auth ?? 'private',
    task,
    engine: served.engine,
    vision: served.vision,
    reasoningParser: d.reasoningParser ?? null,
    deadlineMs: d.deadlineMs ?? null,
    load: d.load ?? 'pinned',
    memoryMb: d.memoryMb ?? null,
    minWarm: d.minWarm ?? 0,
    lora: null,
  };
}

/**
 * A deployment and one more per adapter it lists: the same deployment under the adapter's name, its
 * contexts applying the adapter. Adapters run in process (node-llama-cpp), on a model that generates.
 */
function withAdapters(d: DeploymentDto, base: DeploymentConfig, i: number, problems: string[]): DeploymentConfig[] {
  if (!d.adapters?.length) return [base];
  if (base.engine.kind !== 'llama-cpp' || base.task !== 'generate') {
    problems.push(`deployments[${i}].adapters needs engine llama-cpp and task generate`);
    return [base];
  }
  return [
    base,
    ...d.adapters.map((a) => ({
      ...base,
      id: a.name,
      alias: undefined,
      lora: { path: a.path, scale: a.scale ?? 1, base: base.id },
    })),
  ];
}

/** The deployments and API keys of the file CONVEYOR_CONFIG names; none when it cannot be read. */
export function deploymentsFromFile(
  file: string,
  defaults: DeploymentDefaults,
  context: EngineContext,
  problems: string[],
): { deployments: DeploymentConfig[]; apiKeys: ApiKeyConfig[]; modelNames: ModelNamesConfig } {
  const read = readDeploymentsFile(resolve(file));
  if (!read.ok) {
    problems.push(read.problem);
    return { deployments: [], apiKeys: [], modelNames: { aliases: [], defaultDeployment: null } };
  }
  return {
    deployments: read.value.deployments.flatMap((d, i) =>
      withAdapters(d, fromFile(d, i, defaults, context, problems), i, problems),
    ),
    apiKeys: (read.value.apiKeys ?? []).map((k) => ({
      name: k.name,
      sha256: k.sha256.toLowerCase(),
      rateLimit: k.rateLimit,
      tokenLimit: k.tokenLimit,
      tiers: k.tiers,
      weight: k.weight,
      deadlineMs: k.deadlineMs,
      webhook: k.webhook,
    })),
    modelNames: {
      aliases: (read.value.modelAliases ?? []).map((a) => ({ name: a.name, deployment: a.deployment })),
      defaultDeployment: read.value.defaultDeployment ?? null,
    },
  };
}
