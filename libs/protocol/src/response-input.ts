import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import type { InputContentPart, InputImagePart, ResponseInputItem, ToolOutput } from '@conveyor/openai';
import type { ChatTurn, TurnPart } from '@conveyor/queue';
import { isObject } from '@conveyor/structured';
import type { DecodedImages } from './generation-request.js';
import { isWellFormedText } from './message-content.validator.js';
import { decodeReasoning } from './reasoning-content.js';
import { RequestProblem } from './request-problem.js';
import { CUSTOM_INPUT, modelNameOf } from './response-tool-list.js';
import { FUNCTION_NAME } from './tools.dto.js';

/** As many items as chat takes messages. */
export const MAX_INPUT_ITEMS = 4096;

const ROLES: readonly unknown[] = ['user', 'assistant', 'system', 'developer'];
const DETAILS: readonly unknown[] = ['auto', 'low', 'high', undefined, null];
const text = (v: unknown): v is string => typeof v === 'string' && isWellFormedText(v);
const callId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

function partProblem(part: unknown, at: string): string | null {
  if (!isObject(part)) return `${at} must be an object`;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return text(part.text) ? null : `${at} of type "${part.type}" must have a string "text" of valid text`;
    case 'input_image':
      if (part.image_url !== undefined && part.image_url !== null && typeof part.image_url !== 'string')
        return `${at}.image_url must be a string`;
      if (!DETAILS.includes(part.detail)) return `${at}.detail must be "auto", "low" or "high"`;
      return null;
    default:
      return `${at} has unknown type ${JSON.stringify(part.type)}; expected "input_text", "input_image" or "output_text"`;
  }
}

function itemProblem(item: unknown, at: string): string | null {
  if (!isObject(item)) return `${at} must be an object`;
  switch (item.type) {
    case undefined:
    case 'message': {
      if (!ROLES.includes(item.role)) return `${at}.role must be one of user, assistant, system, developer`;
      if (typeof item.content === 'string')
        return isWellFormedText(item.content) ? null : `${at}.content contains a lone UTF-16 surrogate`;
      if (!Array.isArray(item.content) || item.content.length === 0)
        return `${at}.content must be a string or a non-empty array of content parts`;
      for (const [j, part] of item.content.entries()) {
        const problem = partProblem(part, `${at}.content[${j}]`);
        if (problem) return problem;
      }
      return null;
    }
    case 'function_call':
    case 'custom_tool_call': {
      if (!callId(item.call_id)) return `${at}.call_id must be a string of 1 to 256 characters`;
      if (typeof item.name !== 'string' || !FUNCTION_NAME.test(item.name))
        return `${at}.name must be 1-64 letters, digits, underscores or dashes`;
      if (
        item.namespace !== undefined &&
        item.namespace !== null &&
        !(typeof item.namespace === 'string' && FUNCTION_NAME.test(item.namespace))
      )
        return `${at}.namespace must be 1-64 letters, digits, underscores or dashes`;
      if (item.type === 'custom_tool_call') return text(item.input) ? null : `${at}.input must be a string`;
      return text(item.arguments) ? null : `${at}.arguments must be a string (JSON text)`;
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
      if (!callId(item.call_id)) return `${at}.call_id must be a string of 1 to 256 characters`;
      return outputProblem(item.output, `${at}.output`);
    case 'reasoning':
      if (item.encrypted_content !== undefined && item.encrypted_content !== null) {
        if (typeof item.encrypted_content !== 'string') return `${at}.encrypted_content must be a string`;
        if (decodeReasoning(item.encrypted_content) === null)
          return `${at}.encrypted_content was not made by this server (or was altered)`;
      }
      return null;
    default:
      return `${at} has unsupported type ${JSON.stringify(item.type)}; expected "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output" or "reasoning"`;
  }
}

/** A tool's output: a string, or content parts whose text parts are strings. */
function outputProblem(output: unknown, at: string): string | null {
  if (typeof output === 'string') return isWellFormedText(output) ? null : `${at} contains a lone UTF-16 surrogate`;
  if (!Array.isArray(output)) return `${at} must be a string or an array of content parts`;
  for (const [j, part] of output.entries()) {
    if (!isObject(part) || typeof part.type !== 'string') return `${at}[${j}] must be a content part with a type`;
    if ((part.type === 'input_text' || part.type === 'output_text') && !text(part.text))
      return `${at}[${j}] of type "${part.type}" must have a string "text" of valid text`;
  }
  return null;
}

/** A tool's output as the model reads it: the text of its text parts (other parts are not shown). */
export function outputText(output: ToolOutput): string {
  if (typeof output === 'string') return output;
  return output
    .flatMap((p) =>
      (p.type === 'input_text' || p.type === 'output_text') && typeof p.text === 'string' ? [p.text] : [],
    )
    .join('\n');
}

/** Why an `input` value is malformed, naming the item at fault, or null when it is well-formed. */
export function describeInputProblem(input: unknown): string | null {
  if (typeof input === 'string') return isWellFormedText(input) ? null : 'input contains a lone UTF-16 surrogate';
  if (!Array.isArray(input)) return 'input must be a string or an array of input items';
  if (input.length === 0) return 'input must not be an empty array';
  if (input.length > MAX_INPUT_ITEMS) return `input must hold at most ${MAX_INPUT_ITEMS} items`;
  for (const [i, item] of input.entries()) {
    const problem = itemProblem(item, `input[${i}]`);
    if (problem) return problem;
  }
  return null;
}

@ValidatorConstraint({ name: 'responseInput' })
export class ResponseInputConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return describeInputProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return describeInputProblem(args.value) ?? 'input is malformed';
  }
}

/** `input` as items: a string is one user message. */
export const inputItems = (input: string | ResponseInputItem[]): ResponseInputItem[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;

/** An image part of the input, with where it is (for errors). */
export interface ImagePartAt {
  part: InputImagePart;
  at: string;
}

/** Every image part of `items`, in order; `base` names where the items sit (`input`). */
export function imageParts(items: readonly ResponseInputItem[], base: string): ImagePartAt[] {
  const found: ImagePartAt[] = [];
  for (const [i, item] of items.entries()) {
    if (item.type === 'message' || item.type === undefined) {
      if (typeof item.content === 'string') continue;
      for (const [j, part] of item.content.entries())
        if (part.type === 'input_image') found.push({ part, at: `${base}[${i}].content[${j}]` });
    }
  }
  return found;
}

/** The call ids of the function and custom tool calls among `items`. */
export const callIds = (items: readonly ResponseInputItem[]): string[] =>
  items.flatMap((i) => (i.type === 'function_call' || i.type === 'custom_tool_call' ? [i.call_id] : []));

/** Checks that each tool call output answers a call made before it (`known`: calls of earlier turns). */
export function checkCallOutputs(items: readonly ResponseInputItem[], known: Set<string>): void {
  for (const [i, item] of items.entries()) {
    if (item.type === 'function_call' || item.type === 'custom_tool_call') known.add(item.call_id);
    if ((item.type === 'function_call_output' || item.type === 'custom_tool_call_output') && !known.has(item.call_id)) {
      const kind = item.type === 'function_call_output' ? 'function_call' : 'custom_tool_call';
      throw new RequestProblem(
        `input[${i}] answers call '${item.call_id}', which no earlier ${kind} item made.`,
        `input[${i}].call_id`,
      );
    }
  }
}

const partText = (p: InputContentPart): string | null => (p.type === 'input_image' ? null : p.text);

/**
 * The items as chat turns, as the job carries them: developer messages become system turns, a
 * tool call joins the assistant turn before it (or opens one) under the name the model was offered
 * it by (`namespace__name`; a custom tool's input as its one JSON argument), reasoning items are
 * left out.
 */
export function itemsToTurns(items: readonly ResponseInputItem[], images: DecodedImages): ChatTurn[] {
  const turns: ChatTurn[] = [];
  for (const item of items) {
    if (item.type === 'reasoning') continue;
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const last = turns.at(-1);
      const call = {
        id: item.call_id,
        name: modelNameOf(item.name, item.namespace),
        arguments: item.type === 'function_call' ? item.arguments : JSON.stringify({ [CUSTOM_INPUT]: item.input }),
      };
      if (last?.role === 'assistant') (last.toolCalls ??= []).push(call);
      else turns.push({ role: 'assistant', content: '', toolCalls: [call] });
      continue;
    }
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      turns.push({ role: 'tool', content: outputText(item.output), toolCallId: item.call_id });
      continue;
    }
    const role = item.role === 'developer' ? 'system' : item.role;
    if (typeof item.content === 'string') {
      turns.push({ role, content: item.content });
      continue;
    }
    const content = item.content
      .map(partText)
      .filter((t): t is string => t !== null)
      .join('\n');
    const turn: ChatTurn = { role, content };
    if (item.content.some((p) => p.type === 'input_image')) {
      turn.parts = item.content.map((p): TurnPart => {
        if (p.type !== 'input_image') return { type: 'text', text: p.text };
        const image = images.get(p);
        if (!image) throw new Error('A request with images is checked (which decodes them) before it becomes a job.');
        return { type: 'image', image: image.ref };
      });
    }
    turns.push(turn);
  }
  return turns;
}

/** Characters of the items' text and calls, for the prompt length check. */
export function itemChars(items: readonly ResponseInputItem[]): number {
  let chars = 0;
  for (const item of items) {
    if (item.type === 'function_call') chars += item.name.length + item.arguments.length;
    else if (item.type === 'custom_tool_call') chars += item.name.length + item.input.length;
    else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
      chars += outputText(item.output).length;
    else if (item.type !== 'reasoning') {
      if (typeof item.content === 'string') chars += item.content.length;
      else for (const p of item.content) chars += partText(p)?.length ?? 0;
    }
  }
  return chars;
}
