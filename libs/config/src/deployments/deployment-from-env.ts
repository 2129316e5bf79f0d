import type { DeploymentConfig } from '../config.types.js';
import { resolveEngine, type EngineContext, type EngineFieldNames } from '../engine-config.js';
import type { EnvReader } from '../env/env-reader.js';
import type { DeploymentDefaults } from './deployment-defaults.js';
import { DEPLOYMENT_ID, deriveDeploymentId } from './deployment-id.js';

/** Engine fields of the one deployment the environment describes, by their variables. */
const ENV_ENGINE_FIELDS: EngineFieldNames = {
  model: 'MODEL',
  task: 'TASK',
  engine: 'ENGINE',
  mmproj: 'MMPROJ',
  imageMaxTokens: 'IMAGE_MAX_TOKENS',
  vision: 'VISION',
  upstream: 'UPSTREAM_URL',
  upstreamUrl: 'UPSTREAM_URL',
  upstreamApiKey: 'UPSTREAM_API_KEY',
  upstreamApiKeyEnv: 'UPSTREAM_API_KEY',
  upstreamModel: 'UPSTREAM_MODEL',
  // The environment gives a simulated engine no settings: ENGINE=simulated runs at the default pace.
  simulated: 'ENGINE',
};

/** The one deployment the environment describes when no deployments file is named. */
export function deploymentFromEnv(
  r: EnvReader,
  defaults: DeploymentDefaults,
  context: EngineContext,
): DeploymentConfig {
  const task = r.oneOf('TASK');
  const upstreamUrl = r.optionalString('UPSTREAM_URL');
  // Engine settings left unset are left to resolveEngine, which tells them from those set.
  const served = resolveEngine(
    {
      model: r.optionalString('MODEL'),
      task,
      engine: r.optionalString('ENGINE') === undefined ? undefined : r.oneOf('ENGINE'),
      mmproj: r.optionalString('MMPROJ'),
      imageMaxTokens: r.optionalString('IMAGE_MAX_TOKENS') === undefined ? undefined : r.int('IMAGE_MAX_TOKENS', 0),
      vision: r.optionalString('VISION') === undefined ? undefined : r.bool('VISION'),
      upstream:
        upstreamUrl === undefined
          ? undefined
          : {
              url: upstreamUrl,
              apiKey: r.optionalString('UPSTREAM_API_KEY'),
              model: r.optionalString('UPSTREAM_MODEL'),
            },
    },
    ENV_ENGINE_FIELDS,
    context,
    r.problems,
  );
  if (!upstreamUrl) {
    for (const name of ['UPSTREAM_API_KEY', 'UPSTREAM_MODEL'] as const)
      r.check(!r.optionalString(name), `${name} is set but UPSTREAM_URL is not: name the upstream too`);
  }
  const id = r.optionalString('MODEL_ID') ?? deriveDeploymentId(served.model);
  // No model at all is its own problem, already reported; an id derived from nothing is not another.
  if (served.model || r.optionalString('MODEL_ID'))
    r.check(DEPLOYMENT_ID.test(id), `MODEL_ID must be 1-128 letters, digits, '.', '_', '-' or '/' (got "${id}")`);
  return {
    id,
    model: served.model,
    pool: r.oneOf('POOL'),
    ...defaults,
    defaults: {},
    auth: 'private',
    task,
    engine: served.engine,
    vision: served.vision,
    reasoningParser: r.oneOf('REASONING_PARSER') === 'think' ? 'think' : null,
    deadlineMs: null,
    load: 'pinned',
    memoryMb: null,
    minWarm: 0,
    lora: null,
  };
}
