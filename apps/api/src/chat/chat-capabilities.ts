import type { ChatCompletionRequestDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/**
 * Refuses well-formed requests for features this server does not offer yet,
 * naming the field, rather than silently ignoring what the caller asked for.
 */
export function assertSupported(dto: ChatCompletionRequestDto): void {
  for (const [i, m] of dto.messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of m.content.entries()) {
      if (part.type !== 'image_url') continue;
      // Never fetched: a URL here would let any caller make this server reach into its network.
      if (!part.image_url.url.startsWith('data:')) {
        throw OpenAiHttpError.invalidRequest(
          'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
          `messages[${i}].content[${j}].image_url.url`,
          'invalid_image_url',
        );
      }
      throw OpenAiHttpError.unsupported('Image input', `messages[${i}].content[${j}]`);
    }
  }
  if (dto.tools?.length) throw OpenAiHttpError.unsupported('Tool calling (tools)', 'tools');
  if (dto.n !== undefined && dto.n !== null && dto.n > 1) throw OpenAiHttpError.unsupported('More than one choice (n > 1)', 'n');
  if (dto.logprobs) throw OpenAiHttpError.unsupported('logprobs', 'logprobs');
  if (dto.logit_bias && Object.keys(dto.logit_bias).length) throw OpenAiHttpError.unsupported('logit_bias', 'logit_bias');
  const format = dto.response_format?.type;
  if (format !== undefined && format !== 'text') {
    throw OpenAiHttpError.unsupported(`response_format of type ${JSON.stringify(format)}`, 'response_format');
  }
}
