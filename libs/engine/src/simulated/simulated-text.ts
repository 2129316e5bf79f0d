import type { GenerationInput } from '../core/generation-engine.js';

/** UTF-8 bytes a simulated prompt token stands for: about what BPE vocabularies average on English text. */
export const BYTES_PER_PROMPT_TOKEN = 4;

/**
 * A simulated reply's tokens: the configured text's words, each with the space before it, repeated
 * for as long as the reply runs. Token `i` of a reply is always the same word, so a reply continued
 * after `k` tokens goes on from word `k`.
 */
export class SimulatedText {
  private readonly words: string[];

  constructor(text: string) {
    const words = text.match(/\s*\S+/g) ?? [];
    if (!words.length) throw new Error('A simulated reply needs a text with at least one word.');
    this.words = words;
  }

  /** The text of token `index` (0-based) of a reply: a repeat of the text starts with a space. */
  token(index: number): string {
    const word = this.words[index % this.words.length]!;
    return index >= this.words.length && !/^\s/.test(word) ? ` ${word}` : word;
  }
}

/**
 * Prompt tokens of a request, counted without a tokenizer: the UTF-8 bytes of what a template would
 * render (each raw prompt; or the turns' text, their tool calls and the tool list) divided by
 * BYTES_PER_PROMPT_TOKEN, rounded up, at least 1. `continued`: a reply already sent, which the prompt
 * now holds. One count per prompt.
 */
export function simulatedPromptTokens(
  input: Pick<GenerationInput, 'messages' | 'prompts' | 'tools'>,
  continued = '',
): number[] {
  const tokens = (bytes: number) => Math.max(1, Math.ceil(bytes / BYTES_PER_PROMPT_TOKEN));
  if (input.prompts) return input.prompts.map((p) => tokens(Buffer.byteLength(p)));
  let bytes = Buffer.byteLength(continued) + (input.tools?.length ? Buffer.byteLength(JSON.stringify(input.tools)) : 0);
  for (const turn of input.messages) {
    bytes += Buffer.byteLength(turn.content);
    for (const call of turn.toolCalls ?? []) bytes += Buffer.byteLength(call.name) + Buffer.byteLength(call.arguments);
  }
  return [tokens(bytes)];
}
