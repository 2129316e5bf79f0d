/** What the request bodies' tests share: a deployment as their checks see it, the image limits, a refusal. */
import {
  checkGeneration,
  RequestProblem,
  type DeploymentTraits,
  type GenerationBody,
  type ImageLimits,
} from '@conveyor/protocol';
import type { GenerationJobData } from '@conveyor/queue';

/**
 * A generating deployment as a request body's checks see it: 4096 tokens of context, 4 sequences, no
 * vision, no preset; `over` changes what a test is about.
 */
export const deploymentTraits = (over: Partial<DeploymentTraits> = {}): DeploymentTraits => ({
  id: 'd',
  task: 'generate',
  contextSize: 4096,
  promptCharsPerToken: 32,
  parallel: 4,
  vision: false,
  defaults: {},
  ...over,
});

/** The platform's default image limits. */
export const IMAGE_LIMITS: ImageLimits = { maxBytes: 10 * 1024 * 1024, maxPixels: 7680 * 4320, maxCount: 8 };

/** The RequestProblem a call raises; fails the test when it returns or raises anything else. */
export function requestProblem(call: () => unknown): RequestProblem {
  try {
    call();
  } catch (err) {
    if (err instanceof RequestProblem) return err;
    throw err;
  }
  throw new Error('expected a RequestProblem');
}

/** A body's job as its route makes it: checked against the deployment and the default image limits first. */
export const jobOf = (
  body: GenerationBody,
  requestId: string,
  deployment: DeploymentTraits,
  now?: number,
): GenerationJobData => checkGeneration(body, deployment, IMAGE_LIMITS).toJob(requestId, now);
