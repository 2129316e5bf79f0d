import { describe, expect, it } from '@jest/globals';
import { EngineInputError } from '../core/generation-engine.js';
import { rawPromptTokens, type RawPromptVocabulary } from './raw-prompt.js';

const BOS = 1;
/** One token per character, offset past BOS. */
const vocabulary = (bos: number | null, prependBos: boolean): RawPromptVocabulary<number> => ({
  bos,
  prependBos,
  tokenize: (text) => [...text].map((c) => c.charCodeAt(0) + 100),
});

describe('rawPromptTokens', () => {
  it('is the text alone when the model adds no BOS', () => {
    expect(rawPromptTokens('ab', vocabulary(BOS, false))).toEqual([197, 198]);
  });

  it('puts BOS first when the model asks for it', () => {
    expect(rawPromptTokens('ab', vocabulary(BOS, true))).toEqual([BOS, 197, 198]);
  });

  it('starts an empty prompt from BOS, whether or not the model adds it to other prompts', () => {
    expect(rawPromptTokens('', vocabulary(BOS, false))).toEqual([BOS]);
    expect(rawPromptTokens('', vocabulary(BOS, true))).toEqual([BOS]);
  });

  it('refuses an empty prompt, naming it, when the model has no BOS', () => {
    let error: unknown;
    try {
      rawPromptTokens('', vocabulary(null, false));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EngineInputError);
    expect(error).toMatchObject({ code: 'invalid_value', param: 'prompt', message: expect.stringContaining('empty') });
  });
});
