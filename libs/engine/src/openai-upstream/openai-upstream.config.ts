import type { DeploymentOf, EngineHost } from '../core/engine-factory.js';
import type { OpenAiUpstreamEngineOptions } from './openai-upstream.engine.js';

/** The upstream engine's options, from a deployment's config and the host's. */
export function openAiUpstreamOptions(
  deployment: DeploymentOf<'openai'>,
  host: Pick<EngineHost, 'images'>,
): OpenAiUpstreamEngineOptions {
  const { url, apiKey, model } = deployment.engine;
  return {
    url,
    apiKey,
    model: model ?? deployment.model,
    images: host.images,
    name: `The upstream of "${deployment.id}" (${url})`,
  };
}
