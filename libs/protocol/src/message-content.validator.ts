import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { isObject } from '@conveyor/structured';

/** OpenAI's resolution hint; accepted for compatibility, while the model's projector sets its own resolution. */
const IMAGE_DETAILS: readonly unknown[] = ['auto', 'low', 'high'];

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text that cannot be encoded as UTF-8 (a lone surrogate) cannot be tokenized either. */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);

/** Why a content value is malformed, or null when it is well-formed. */
export function describeContentProblem(content: unknown): string | null {
  if (typeof content === 'string')
    return isWellFormedText(content) ? null : 'contains a lone UTF-16 surrogate, which is not valid text';
  if (!Array.isArray(content)) return 'must be a string or an array of content parts';
  if (content.length === 0) return 'must not be an empty array';
  for (const [i, part] of content.entries()) {
    if (!isObject(part)) return `part ${i} must be an object`;
    if (part.type === 'text') {
      if (typeof part.text !== 'string') return `part ${i} of type "text" must have a string "text"`;
      if (!isWellFormedText(part.text)) return `part ${i} contains a lone UTF-16 surrogate, which is not valid text`;
    } else if (part.type === 'image_url') {
      if (!isObject(part.image_url) || typeof part.image_url.url !== 'string') {
        return `part ${i} of type "image_url" must have an "image_url" object with a string "url"`;
      }
      const detail = part.image_url.detail;
      if (detail !== undefined && detail !== null && !IMAGE_DETAILS.includes(detail)) {
        return `part ${i} has image_url.detail ${JSON.stringify(detail)}; expected "auto", "low" or "high"`;
      }
    } else {
      return `part ${i} has unknown type ${JSON.stringify(part.type)}; expected "text" or "image_url"`;
    }
  }
  return null;
}

@ValidatorConstraint({ name: 'messageContent' })
export class MessageContentConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return describeContentProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} ${describeContentProblem(args.value)}`;
  }
}
