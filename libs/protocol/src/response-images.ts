import { ErrorCode, type InputContentPart, type ResponseInputItem } from '@conveyor/openai';
import type { DeploymentTraits } from './deployment-traits.js';
import {
  checkImageDataUriBytes,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';
import { imageParts } from './response-input.js';
import { given } from './sampling-fields.dto.js';

/** Counts, then decodes, every image of the conversation (earlier turns' too: the job refers to them all). */
export function decodeImages(
  history: readonly ResponseInputItem[],
  items: readonly ResponseInputItem[],
  deployment: DeploymentTraits,
  limits: ImageLimits,
  images: Map<InputContentPart, DecodedImage>,
): void {
  images.clear();
  const parts = [...imageParts(history, 'previous_response_id'), ...imageParts(items, 'input')];
  if (!parts.length) return;
  if (!deployment.vision) {
    throw new RequestProblem(
      `Invalid content type: input_image is only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
      `${parts[0]!.at}.type`,
      ErrorCode.modelNotSupported,
    );
  }
  if (parts.length > limits.maxCount) {
    throw new RequestProblem(
      `The conversation carries ${parts.length} images; a request may carry at most ${limits.maxCount}.`,
      parts[limits.maxCount]!.at,
      ErrorCode.tooManyImages,
    );
  }
  for (const { part, at } of parts) {
    const url = given(part.image_url);
    if (url === undefined) throw RequestProblem.unsupported('input_image by file_id', `${at}.file_id`);
    // Never fetched: a URL here would let any caller make this server reach into its network.
    if (url.slice(0, 5).toLowerCase() !== 'data:') {
      throw new RequestProblem(
        'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
        `${at}.image_url`,
        ErrorCode.invalidImageUrl,
      );
    }
    checkImageDataUriBytes(url, limits, `${at}.image_url`);
  }
  for (const { part, at } of parts) images.set(part, parseImageDataUri(part.image_url!, limits, `${at}.image_url`));
}
