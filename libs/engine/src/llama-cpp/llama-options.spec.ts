import { describe, it, expect } from '@jest/globals';
import type { Sampling } from '@conveyor/queue';
import { PENALTY_WINDOW, toChatHistory, toSamplingOptions } from './llama-options.js';

describe('toChatHistory', () => {
  it('maps system, user and assistant turns and ends with an empty model response to generate', () => {
    const history = toChatHistory([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'How are you?' },
    ]);
    expect(history).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'user', text: 'Hi' },
      { type: 'model', response: ['Hello!'] },
      { type: 'user', text: 'How are you?' },
      { type: 'model', response: [] },
    ]);
  });

  it('adds the model turn even to an empty conversation and does not mutate its input', () => {
    const messages = Object.freeze([Object.freeze({ role: 'user' as const, content: 'x' })]);
    expect(toChatHistory(messages)).toHaveLength(2);
    expect(toChatHistory([])).toEqual([{ type: 'model', response: [] }]);
  });
});

describe('toSamplingOptions', () => {
  const recent = () => [];

  it('uses neutral values for everything the request left unset', () => {
    const options = toSamplingOptions({ temperature: 0.7 }, recent);
    expect(options.temperature).toBe(0.7);
    expect(options.topP).toBe(1);
    expect(options.topK).toBe(0);
    expect(options.minP).toBe(0);
    expect(options.repeatPenalty).toBeUndefined();
    expect(options.seed).toBeUndefined();
  });

  it('passes given values through', () => {
    const sampling: Sampling = { temperature: 0, topP: 0.9, topK: 40, minP: 0.05, seed: 7 };
    expect(toSamplingOptions(sampling, recent)).toMatchObject({
      temperature: 0,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      seed: 7,
    });
  });

  it.each([-1, 0])('turns top_k %i ("off") into 0', (topK) => {
    expect(toSamplingOptions({ temperature: 1, topK }, recent).topK).toBe(0);
  });

  it('builds a repeat penalty over the recent tokens when any penalty is given, filling the others with neutral values', () => {
    const tokens = () => [1, 2, 3] as never[];
    const onlyRepeat = toSamplingOptions({ temperature: 1, repeatPenalty: 1.1 }, tokens).repeatPenalty;
    expect(onlyRepeat).toMatchObject({
      penalty: 1.1,
      presencePenalty: 0,
      frequencyPenalty: 0,
      maxPunishTokens: PENALTY_WINDOW,
    });
    expect(onlyRepeat?.punishTokens).toBe(tokens);

    const onlyPresence = toSamplingOptions({ temperature: 1, presencePenalty: 0.5 }, recent).repeatPenalty;
    expect(onlyPresence).toMatchObject({ penalty: 1, presencePenalty: 0.5, frequencyPenalty: 0 });

    const onlyFrequency = toSamplingOptions({ temperature: 1, frequencyPenalty: -0.25 }, recent).repeatPenalty;
    expect(onlyFrequency).toMatchObject({ penalty: 1, presencePenalty: 0, frequencyPenalty: -0.25 });
  });

  it('counts a zero penalty as given', () => {
    expect(toSamplingOptions({ temperature: 1, presencePenalty: 0 }, recent).repeatPenalty).toBeDefined();
  });
});
