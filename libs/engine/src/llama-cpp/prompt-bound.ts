import type { LlamaModel } from 'node-llama-cpp';
import type { GenerationInput } from '../core/generation-engine.js';
import { EngineInputError } from '../core/generation-engine.js';

/**
 * The most characters (UTF-16 units) one token of `model` can stand for. A vocabulary entry holds a
 * byte-level token's bytes one character each, or a SentencePiece token's text with '▁' for a space,
 * so no token decodes to more characters than its entry has.
 */
export function longestTokenLength(model: LlamaModel): number {
  const vocabulary = (model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[] | undefined) ?? [];
  let longest = 1;
  for (const entry of vocabulary) if (typeof entry === 'string' && entry.length > longest) longest = entry.length;
  return longest;
}

/** Characters of the text a request's prompt is rendered from: each raw prompt, or everything a chat's template renders. */
export function promptChars(input: Pick<GenerationInput, 'messages' | 'prompts' | 'tools'>, continued = ''): number[] {
  if (input.prompts) return input.prompts.map((p) => p.length);
  let chars = continued.length + (input.tools?.length ? JSON.stringify(input.tools).length : 0);
  for (const turn of input.messages) {
    chars += turn.content.length;
    for (const call of turn.toolCalls ?? []) chars += call.name.length + call.arguments.length;
  }
  return [chars];
}

/**
 * Refuses, before anything is rendered or tokenized, a prompt that cannot fit however it tokenizes:
 * at most `longest` characters per token, it needs more tokens than the context has. Tokenizing a
 * 15 MB prompt only to learn that cost the worker seconds and a gigabyte, and held up every reply.
 */
export function assertPromptCouldFit(chars: readonly number[], contextSize: number, longest: number): void {
  const most = contextSize * longest;
  const over = chars.find((c) => c > most);
  if (over === undefined) return;
  throw new EngineInputError(
    `The prompt is ${over} characters; this model's context of ${contextSize} tokens holds at most ${most}.`,
    'context_length_exceeded',
  );
}
