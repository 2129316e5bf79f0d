import type { ChatTurn, TurnPart } from '@conveyor/queue';
import type { ChatMessageDto } from './chat-message.dto.js';
import type { DecodedImages, ImagePart } from './generation-request.js';
import { RequestProblem } from './request-problem.js';

/** Refuses a tool message that answers no earlier call. */
export function checkToolAnswers(messages: readonly ChatMessageDto[]): void {
  const callIds = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) callIds.add(call.id);
    if (m.role === 'tool' && !callIds.has(m.tool_call_id as string)) {
      throw new RequestProblem(
        `messages[${i}] answers tool call '${m.tool_call_id}', which no earlier assistant message made.`,
        `messages[${i}].tool_call_id`,
      );
    }
  }
}

/** Every image part, in order, with the fields a refusal names. */
export function chatImageParts(messages: readonly ChatMessageDto[]): ImagePart[] {
  const parts: ImagePart[] = [];
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of m.content.entries()) {
      if (part.type !== 'image_url') continue;
      const at = `messages[${i}].content[${j}]`;
      parts.push({ part, at, source: { uri: part.image_url.url, at: `${at}.image_url.url` } });
    }
  }
  return parts;
}

export function toTurn(m: ChatMessageDto, images: DecodedImages): ChatTurn {
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
