import type { GenerationJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { checkGenerationRequest } from './generation-request.check.js';
import { toGenerationJob } from './generation-request.job.js';
import type { GenerationBody, GenerationRequest } from './generation-request.js';
import type { DecodedImage, ImageLimits } from './image-data-uri.parser.js';

/**
 * A generating body checked against its deployment: the job it becomes and the images that job refers
 * to. Every generating API's route and batch line goes through here, so that one check and one job serve
 * them all; only a body's own API's rules (`checkSurface`) come before.
 */
export class CheckedGeneration {
  private constructor(
    readonly request: GenerationRequest,
    private readonly deployment: DeploymentTraits,
    private readonly decoded: ReadonlyMap<object, DecodedImage>,
  ) {}

  /** Refuses what the body's API forbids, then what the deployment cannot honour, naming the field. */
  static of(body: GenerationBody, deployment: DeploymentTraits, limits: ImageLimits): CheckedGeneration {
    body.checkSurface();
    const request = body.toRequest(deployment);
    return new CheckedGeneration(request, deployment, checkGenerationRequest(request, deployment, limits));
  }

  /** The images decoded, each once (a conversation may carry one image in several turns). */
  images(): DecodedImage[] {
    return [...new Map([...this.decoded.values()].map((image) => [image.ref.sha256, image])).values()];
  }

  /** The queue's job. */
  toJob(requestId: string, now = Date.now()): GenerationJobData {
    return toGenerationJob(this.request, this.decoded, requestId, this.deployment, now);
  }
}

/** See `CheckedGeneration.of`. */
export const checkGeneration = (
  body: GenerationBody,
  deployment: DeploymentTraits,
  limits: ImageLimits,
): CheckedGeneration => CheckedGeneration.of(body, deployment, limits);
