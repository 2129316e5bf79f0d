import { ErrorCode } from '@conveyor/openai';
import type { DeploymentTraits } from './deployment-traits.js';
import { checkGenerates, checkPromptLength } from './generation-checks.js';
import type { GenerationRequest } from './generation-request.js';
import {
  checkImageCount,
  checkInlineImage,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';
import { checkSchema } from './schema-checks.js';
import { checkTools } from './tool-checks.js';

/**
 * The one check of a generating request against its deployment and the image limits, whichever API it
 * came from: it generates text, the reply's budget fits the context, the choices fit the sequences, the
 * prompt fits the context, the tools' and the format's schemas can be enforced (and their smallest
 * output fits), the images are of a size, a number and a kind this deployment takes. Returns the images
 * decoded, by the part that carried each; decoding comes last, being the costliest, so that a request
 * refused for another reason does not pay it.
 */
export function checkGenerationRequest(
  request: GenerationRequest,
  deployment: DeploymentTraits,
  limits: ImageLimits,
): Map<object, DecodedImage> {
  checkGenerates(deployment);
  const { maxTokens } = request;
  const { contextSize } = deployment;
  // The words of the body's API: Responses speaks of its input, the others of their prompt.
  const noun = request.promptAt === 'input' ? 'input' : 'prompt';
  if (!request.clampToContext && maxTokens !== undefined && maxTokens >= contextSize) {
    throw new RequestProblem(
      `${request.maxTokensAt} is ${maxTokens}, but the model's context is ${contextSize} tokens, ${noun} included.`,
      request.maxTokensAt,
      ErrorCode.contextLengthExceeded,
    );
  }
  checkChoices(request, deployment);
  const minTokens = request.sampling.minTokens;
  if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens) {
    throw new RequestProblem(`min_tokens (${minTokens}) must not exceed max_tokens (${maxTokens}).`, 'min_tokens');
  }
  checkPromptLength(deployment, request.promptChars, request.promptAt, noun);
  // A call's arguments must fit the context at least; the reply's format must fit the reply's budget.
  checkTools(request.tools, contextSize);
  if (request.format?.type === 'json_schema' && request.formatAt) {
    checkSchema(request.format.schema, request.formatAt, maxTokens ?? contextSize);
  }
  return decodeImages(request, deployment, limits);
}

/** Every choice (of every prompt, with raw prompts) is a sequence of one worker's context, generated together. */
function checkChoices({ n = 1, prompts }: GenerationRequest, deployment: DeploymentTraits): void {
  if (n > deployment.parallel) {
    throw new RequestProblem(
      `n is ${n}; this deployment generates at most ${deployment.parallel} choices at once.`,
      'n',
      ErrorCode.invalidValue,
    );
  }
  const count = prompts?.length ?? 1;
  if (count * n > deployment.parallel) {
    throw new RequestProblem(
      `${count} prompt${count === 1 ? '' : 's'} with n = ${n} make ${count * n} choices; this deployment generates at most ${deployment.parallel} at once.`,
      n > 1 ? 'n' : 'prompt',
      ErrorCode.invalidValue,
    );
  }
}

/**
 * Every image's source and size first: a payload limit, as the body's, whatever the deployment (and a
 * URL is never fetched: it would let any caller make this server reach into its network). Then whether
 * the deployment reads images (naming the first part's type, as OpenAI does); then their count; then
 * decoding, in order.
 */
function decodeImages(
  { images, imageType, imagesIn }: GenerationRequest,
  deployment: DeploymentTraits,
  limits: ImageLimits,
): Map<object, DecodedImage> {
  const decoded = new Map<object, DecodedImage>();
  if (!images.length) return decoded;
  const sources: { part: object; uri: string; at: string }[] = [];
  for (const { part, source } of images) {
    if ('fileAt' in source) throw RequestProblem.unsupported(`${imageType} by file_id`, source.fileAt);
    checkInlineImage(source.uri, limits, source.at);
    sources.push({ part, uri: source.uri, at: source.at });
  }
  if (!deployment.vision) {
    throw new RequestProblem(
      `Invalid content type: ${imageType} is only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
      `${images[0]!.at}.type`,
      ErrorCode.modelNotSupported,
    );
  }
  checkImageCount(images, limits, imagesIn);
  for (const { part, uri, at } of sources) decoded.set(part, parseImageDataUri(uri, limits, at));
  return decoded;
}
