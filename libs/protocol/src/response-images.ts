import { ErrorCode, type InputContentPart, type ResponseInputItem } from '@conveyor/openai';
import type { DeploymentTraits } from './deployment-traits.js';
import {
  checkImageCount,
  checkInlineImage,
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
  checkImageCount(parts, limits, 'conversation');
  for (const { part, at } of parts) {
    const url = given(part.image_url);
    if (url === undefined) throw RequestProblem.unsupported('input_image by file_id', `${at}.file_id`);
    checkInlineImage(url, limits, `${at}.image_url`);
  }
  for (const { part, at } of parts) images.set(part, parseImageDataUri(part.image_url!, limits, `${at}.image_url`));
}
