import { describe, it, expect } from '@jest/globals';
import type { Sampling } from '@conveyor/queue';
import { toChatHistory, toFinishReason, toSamplingOptions } from './llama-options.js';

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
  it('uses neutral values for everything the request left unset', () => {
    const options = toSamplingOptions({ temperature: 0.7 }, undefined, []);
    expect(options.temperature).toBe(0.7);
    expect(options.topP).toBe(1);
    expect(options.topK).toBe(0);
    expect(options.minP).toBe(0);
    expect(options.repeatPenalty).toBe(false);
    expect(options.seed).toBeUndefined();
    expect(options.maxTokens).toBeUndefined();
    expect(options.customStopTriggers).toBeUndefined();
  });

  it('passes given values through', () => {
    const sampling: Sampling = { temperature: 0, topP: 0.9, topK: 40, minP: 0.05, seed: 7 };
    expect(toSamplingOptions(sampling, 16, ['END'])).toMatchObject({
      temperature: 0,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      seed: 7,
      maxTokens: 16,
      customStopTriggers: ['END'],
    });
  });

  it.each([-1, 0])('turns top_k %i ("off") into 0', (topK) => {
    expect(toSamplingOptions({ temperature: 1, topK }, undefined, []).topK).toBe(0);
  });

  it('builds a repeat penalty when any penalty is given, filling the others with neutral values', () => {
    const onlyRepeat = toSamplingOptions({ temperature: 1, repeatPenalty: 1.1 }, undefined, []).repeatPenalty;
    expect(onlyRepeat).toMatchObject({ penalty: 1.1, presencePenalty: 0, frequencyPenalty: 0 });

    const onlyPresence = toSamplingOptions({ temperature: 1, presencePenalty: 0.5 }, undefined, []).repeatPenalty;
    expect(onlyPresence).toMatchObject({ penalty: 1, presencePenalty: 0.5, frequencyPenalty: 0 });

    const onlyFrequency = toSamplingOptions({ temperature: 1, frequencyPenalty: -0.25 }, undefined, []).repeatPenalty;
    expect(onlyFrequency).toMatchObject({ penalty: 1, presencePenalty: 0, frequencyPenalty: -0.25 });
  });

  it('counts a zero penalty as given', () => {
    expect(toSamplingOptions({ temperature: 1, presencePenalty: 0 }, undefined, []).repeatPenalty).not.toBe(false);
  });

  it('leaves customStopTriggers unset for an empty stop list and copies a non-empty one', () => {
    expect(toSamplingOptions({ temperature: 1 }, undefined, []).customStopTriggers).toBeUndefined();
    const stop = ['a', 'b'];
    const triggers = toSamplingOptions({ temperature: 1 }, undefined, stop).customStopTriggers;
    expect(triggers).toEqual(['a', 'b']);
    expect(triggers).not.toBe(stop);
  });
});

describe('toFinishReason', () => {
  it("reports 'length' only when the token limit stopped generation", () => {
    expect(toFinishReason('maxTokens')).toBe('length');
    for (const reason of ['eogToken', 'stopGenerationTrigger', 'customStopTrigger', 'abort', '']) {
      expect(toFinishReason(reason)).toBe('stop');
    }
  });
});
