import type { ContentBlockParam, ImageBlockParam, TextBlockParam, ToolResultBlockParam } from '@conveyor/openai';
import type { ChatTurn, TurnPart } from '@conveyor/queue';
import type { DecodedImages } from './generation-request.js';
import type { MessageParamDto } from './messages-fields.dto.js';

/** A base64 image block as the data URI the image parser reads. */
export const imageDataUri = (block: ImageBlockParam): string =>
  block.source.type === 'base64' ? `data:${block.source.media_type};base64,${block.source.data}` : '';

const blocksOf = (content: string | ContentBlockParam[]): ContentBlockParam[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

const joinText = (blocks: readonly { type: string; text?: string }[]): string =>
  blocks
    .filter((b): b is TextBlockParam => b.type === 'text')
    .map((b) => b.text)
    .join('\n');

const resultText = (block: ToolResultBlockParam): string =>
  typeof block.content === 'string' ? block.content : joinText(block.content ?? []);

/**
 * The system prompt as one turn, or none: the `system` field, then each system turn of the messages in
 * their order, a blank line between them. Folded into one turn at the start, because many chat
 * templates take a system turn only there (and refuse one later in the conversation).
 */
export function systemTurns(
  system: string | TextBlockParam[] | null | undefined,
  messages: readonly MessageParamDto[] = [],
): ChatTurn[] {
  const parts = [
    typeof system === 'string' ? system : joinText(system ?? []),
    ...messages.filter((m) => m.role === 'system').map((m) => joinText(blocksOf(m.content))),
  ].filter(Boolean);
  return parts.length ? [{ role: 'system', content: parts.join('\n\n') }] : [];
}

/**
 * Anthropic's messages as the queue's chat turns: a user message's tool results become tool turns
 * (each answering its call by id, before the rest of the message, as Anthropic orders them), its
 * text and images one user turn; an assistant message's text one turn with its tool calls. Earlier
 * thinking is not part of the prompt, as on Anthropic's API. System turns are left to `systemTurns`.
 */
export function messagesToTurns(messages: readonly MessageParamDto[], images: DecodedImages): ChatTurn[] {
  const turns: ChatTurn[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const turn: ChatTurn = { role: 'assistant', content: joinText(blocks) };
      const calls = blocks.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input) }] : [],
      );
      if (calls.length) turn.toolCalls = calls;
      turns.push(turn);
      continue;
    }
    for (const b of blocks) {
      if (b.type === 'tool_result') {
        turns.push({ role: 'tool', toolCallId: b.tool_use_id, content: resultText(b) });
      }
    }
    const rest = blocks.filter((b) => b.type === 'text' || b.type === 'image');
    if (!rest.length) continue;
    const turn: ChatTurn = { role: 'user', content: joinText(rest) };
    if (rest.some((b) => b.type === 'image')) {
      turn.parts = rest.map((b): TurnPart => {
        if (b.type === 'text') return { type: 'text', text: b.text };
        const image = images.get(b);
        if (!image) throw new Error('A request with images is checked (which decodes them) before it becomes a job.');
        return { type: 'image', image: image.ref };
      });
    }
    turns.push(turn);
  }
  return turns;
}

/** Characters of every text the template renders from the messages. */
export function messagesChars(messages: readonly MessageParamDto[]): number {
  let chars = 0;
  for (const m of messages) {
    for (const b of blocksOf(m.content)) {
      if (b.type === 'text') chars += b.text.length;
      else if (b.type === 'tool_use') chars += b.name.length + JSON.stringify(b.input).length;
      else if (b.type === 'tool_result') chars += resultText(b).length;
    }
  }
  return chars;
}
