import { describe, expect, it } from '@jest/globals';
import { EngineInputError } from '../core/generation-engine.js';
import { assertPromptCouldFit, promptChars } from './prompt-bound.js';

describe('prompt bound', () => {
  it('counts what a chat template renders from: message text, calls, tool definitions, continued text', () => {
    const chars = promptChars(
      {
        messages: [
          { role: 'user', content: 'abcd' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'fn', arguments: '{"a":1}' }] },
        ],
        tools: [{ name: 'fn' }],
      },
      'xyz',
    );
    expect(chars).toEqual([4 + 2 + 7 + JSON.stringify([{ name: 'fn' }]).length + 3]);
  });

  it('counts each raw prompt on its own: each is its own sequence', () => {
    expect(promptChars({ messages: [], prompts: ['ab', 'cdef'] })).toEqual([2, 4]);
  });

  it('refuses only what could not fit at the longest token, naming the size', () => {
    expect(() => assertPromptCouldFit([4096 * 13], 4096, 13)).not.toThrow();
    expect(() => assertPromptCouldFit([10, 4096 * 13 + 1], 4096, 13)).toThrow(EngineInputError);
    try {
      assertPromptCouldFit([60_000], 4096, 13);
    } catch (err) {
      expect(err).toMatchObject({ code: 'context_length_exceeded' });
      expect((err as Error).message).toMatch(/60000 characters.*at most 53248/);
    }
  });
});
