import type { DeploymentTraits, ImageLimits } from '@conveyor/protocol';

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
