import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { isObject } from '@conveyor/structured';
import { isWellFormedText } from './message-content.validator.js';
import { FUNCTION_NAME } from './tools.dto.js';

const MEDIA_TYPES: readonly unknown[] = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

const text = (value: unknown, at: string): string | null => {
  if (typeof value !== 'string') return `${at} must be a string`;
  return isWellFormedText(value) ? null : `${at} contains a lone UTF-16 surrogate, which is not valid text`;
};

function textBlockProblem(block: Record<string, unknown>, at: string): string | null {
  return text(block.text, `${at}.text`);
}

function imageBlockProblem(block: Record<string, unknown>, at: string): string | null {
  const source = block.source;
  if (!isObject(source)) return `${at} of type "image" must have a "source" object`;
  // Never fetched: a URL here would let any caller make this server reach into its network.
  if (source.type !== 'base64') {
    return `${at}.source.type must be "base64": only inline images are accepted, URLs are never fetched`;
  }
  if (!MEDIA_TYPES.includes(source.media_type)) {
    return `${at}.source.media_type must be one of ${MEDIA_TYPES.join(', ')}`;
  }
  if (typeof source.data !== 'string') return `${at}.source.data must be a base64 string`;
  return null;
}

function toolUseProblem(block: Record<string, unknown>, at: string): string | null {
  if (typeof block.id !== 'string' || !block.id || block.id.length > 256)
    return `${at}.id must be a string of 1-256 characters`;
  if (typeof block.name !== 'string' || !FUNCTION_NAME.test(block.name)) {
    return `${at}.name must be 1-64 letters, digits, underscores or dashes`;
  }
  if (!isObject(block.input)) return `${at}.input must be an object`;
  return null;
}

function toolResultProblem(block: Record<string, unknown>, at: string): string | null {
  if (typeof block.tool_use_id !== 'string' || !block.tool_use_id)
    return `${at}.tool_use_id must be a non-empty string`;
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') return `${at}.is_error must be a boolean`;
  const content = block.content;
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return text(content, `${at}.content`);
  if (!Array.isArray(content)) return `${at}.content must be a string or an array of text blocks`;
  for (const [i, inner] of content.entries()) {
    const where = `${at}.content[${i}]`;
    if (!isObject(inner)) return `${where} must be an object`;
    if (inner.type === 'image') return `${where}: images in tool results are not supported; send them in a text turn`;
    if (inner.type !== 'text') return `${where} has type ${JSON.stringify(inner.type)}; expected "text"`;
    const problem = textBlockProblem(inner, where);
    if (problem) return problem;
  }
  return null;
}

/**
 * The blocks each role may send: a user sends text, images and tool results; an assistant text, calls
 * and thinking; a system turn text.
 */
const BLOCKS: Readonly<Record<'user' | 'assistant' | 'system', readonly string[]>> = {
  user: ['text', 'image', 'tool_result'],
  assistant: ['text', 'tool_use', 'thinking', 'redacted_thinking'],
  system: ['text'],
};

/** Why a message's content is malformed for its role, or null when it is well-formed. `at`: the content's path. */
export function describeMessagesContentProblem(content: unknown, role: unknown, at: string): string | null {
  if (typeof content === 'string') return text(content, at);
  if (!Array.isArray(content)) return `${at} must be a string or an array of content blocks`;
  if (content.length === 0) return `${at} must not be an empty array`;
  const who = role === 'assistant' || role === 'system' ? role : 'user';
  const allowed = BLOCKS[who];
  for (const [i, block] of content.entries()) {
    const where = `${at}[${i}]`;
    if (!isObject(block)) return `${where} must be an object`;
    if (!allowed.includes(block.type as string)) {
      return `${where} has type ${JSON.stringify(block.type)}; ${who === 'assistant' ? 'an' : 'a'} ${who} message takes ${allowed.join(', ')}`;
    }
    const problem =
      block.type === 'text'
        ? textBlockProblem(block, where)
        : block.type === 'image'
          ? imageBlockProblem(block, where)
          : block.type === 'tool_use'
            ? toolUseProblem(block, where)
            : block.type === 'tool_result'
              ? toolResultProblem(block, where)
              : block.type === 'thinking'
                ? text(block.thinking, `${where}.thinking`)
                : null;
    if (problem) return problem;
  }
  return null;
}

/** Why a `system` value is malformed: it is a string or a list of text blocks. */
export function describeSystemProblem(system: unknown): string | null {
  if (typeof system === 'string') return text(system, 'system');
  if (!Array.isArray(system)) return 'system must be a string or an array of text blocks';
  for (const [i, block] of system.entries()) {
    const where = `system[${i}]`;
    if (!isObject(block) || block.type !== 'text')
      return `${where} must be a text block ({"type": "text", "text": ...})`;
    const problem = textBlockProblem(block, where);
    if (problem) return problem;
  }
  return null;
}

/** Checks a message's `content` against its role; the message names the block at fault. */
@ValidatorConstraint({ name: 'messagesContent' })
export class MessagesContentConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return describeMessagesContentProblem(value, (args.object as { role?: unknown }).role, args.property) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    const problem = describeMessagesContentProblem(args.value, (args.object as { role?: unknown }).role, args.property);
    return problem ?? `${args.property} is malformed`;
  }
}

@ValidatorConstraint({ name: 'messagesSystem' })
export class MessagesSystemConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return describeSystemProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return describeSystemProblem(args.value) ?? 'system is malformed';
  }
}
