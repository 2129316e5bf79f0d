import { ErrorCode, type ContentPart, type ImageContentPart } from '@conveyor/openai';
import type { ChatTurn, TurnPart } from '@conveyor/queue';
import type { ChatMessageDto } from './chat-message.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import {
  checkImageCount,
  checkInlineImage,
  parseImageDataUri,
  type DecodedImage,
  type ImageLimits,
} from './image-data-uri.parser.js';
import { RequestProblem } from './request-problem.js';

/** Refuses a tool message that answers no earlier call, and an image this deployment cannot take. */
export function checkMessages(
  messages: readonly ChatMessageDto[],
  deployment: DeploymentTraits,
  limits: ImageLimits,
): void {
  const callIds = new Set<string>();
  let firstImage: string | null = null;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) callIds.add(call.id);
    if (m.role === 'tool' && !callIds.has(m.tool_call_id as string)) {
      throw new RequestProblem(
        `messages[${i}] answers tool call '${m.tool_call_id}', which no earlier assistant message made.`,
        `messages[${i}].tool_call_id`,
      );
    }
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of m.content.entries()) {
      if (part.type !== 'image_url') continue;
      const at = `messages[${i}].content[${j}]`;
      firstImage ??= at;
      // Every image's size before what the deployment reads: a payload limit, as the body's, whatever the deployment.
      checkInlineImage(part.image_url.url, limits, `${at}.image_url.url`);
    }
  }
  // OpenAI names the part's type for a model without vision, and so does this.
  if (firstImage && !deployment.vision) {
    throw new RequestProblem(
      `Invalid content type: image_url is only supported by deployments with a vision model; '${deployment.id}' reads text only.`,
      `${firstImage}.type`,
      ErrorCode.modelNotSupported,
    );
  }
}

/** Decodes every image part, in order, after counting them: a request over the count decodes none. */
export function decodeImages(
  messages: readonly ChatMessageDto[],
  limits: ImageLimits,
  images: Map<ContentPart, DecodedImage>,
): void {
  images.clear();
  const parts: { part: ImageContentPart; at: string }[] = [];
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of m.content.entries()) {
      if (part.type === 'image_url') parts.push({ part, at: `messages[${i}].content[${j}]` });
    }
  }
  checkImageCount(parts, limits, 'request');
  for (const { part, at } of parts) {
    images.set(part, parseImageDataUri(part.image_url.url, limits, `${at}.image_url.url`));
  }
}

export function toTurn(m: ChatMessageDto, images: ReadonlyMap<ContentPart, DecodedImage>): ChatTurn {
  const parts = typeof m.content === 'string' ? [] : (m.content ?? []);
  const content =
    typeof m.content === 'string'
      ? m.content
      : parts
          .filter((p) => p.type === 'text')
          .map((p) => p.text)
          .join('\n');
  // "developer" is OpenAI's newer name for the system role.
  const turn: ChatTurn = { role: m.role === 'developer' ? 'system' : m.role, content };
  if (parts.some((p) => p.type === 'image_url')) {
    turn.parts = parts.map((p): TurnPart => {
      if (p.type === 'text') return { type: 'text', text: p.text };
      const image = images.get(p);
      if (!image) throw new Error('A request with images is checked (which decodes them) before it becomes a job.');
      return { type: 'image', image: image.ref };
    });
  }
  if (m.role === 'assistant' && m.tool_calls?.length) {
    turn.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  }
  if (m.role === 'tool') turn.toolCallId = m.tool_call_id as string;
  return turn;
}
