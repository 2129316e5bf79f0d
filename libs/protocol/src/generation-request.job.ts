import type { GenerationJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import type { DecodedImages, GenerationRequest } from './generation-request.js';
import { toJobTools } from './tool-checks.js';

/**
 * The one job a generating request becomes, whichever API it came from: the conversation (or raw
 * prompts), the tools the model is told of, the reply's format, sampling, budget and stop sequences.
 * `images`: those its check decoded, which the turns refer to by hash; their bytes never travel with it.
 */
export function toGenerationJob(
  request: GenerationRequest,
  images: DecodedImages,
  requestId: string,
  deployment: DeploymentTraits,
  now: number,
): GenerationJobData {
  return {
    requestId,
    deployment: deployment.id,
    messages: request.turns(images),
    ...(request.prompts ? { prompts: [...request.prompts] } : {}),
    ...toJobTools(request.tools),
    responseFormat: request.format,
    ...(request.cacheKey ? { cacheKey: request.cacheKey } : {}),
    sampling: request.sampling,
    maxTokens: request.maxTokens,
    ...(request.clampToContext ? { clampToContext: true } : {}),
    stop: [...request.stop],
    n: request.n,
    logprobs: request.logprobs,
    enqueuedAt: now,
  };
}
