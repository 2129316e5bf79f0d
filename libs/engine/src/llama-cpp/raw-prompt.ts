import { EngineInputError } from '../core/generation-engine.js';

/** What a raw prompt's tokens depend on in the model. */
export interface RawPromptVocabulary<T> {
  /** The beginning-of-sequence token; null when the model has none. */
  bos: T | null;
  /** The model asks for BOS in front of every sequence (`tokenizer.ggml.add_bos_token`). */
  prependBos: boolean;
  /** Text as plain text: special-token text stays text. */
  tokenize(text: string): T[];
}

/**
 * The tokens a legacy completion generates from: the prompt as it is, after BOS when the model asks
 * for one. An empty prompt starts from BOS alone, as OpenAI's models start from `<|endoftext|>`;
 * without BOS there is nothing to start from, which no retry changes, so it is the request's fault.
 */
export function rawPromptTokens<T>(text: string, vocabulary: RawPromptVocabulary<T>): T[] {
  const { bos, prependBos } = vocabulary;
  const tokens = [...(prependBos && bos !== null ? [bos] : []), ...(text ? vocabulary.tokenize(text) : [])];
  if (tokens.length) return tokens;
  if (bos !== null) return [bos];
  throw new EngineInputError(
    'The prompt is empty, and this model has no beginning-of-sequence token to generate from; send some text.',
    'invalid_value',
    'prompt',
  );
}
