import type { GenerationJobData } from '@conveyor/queue';
import { canonicalJson, prefixKey, repeatKey } from './line-keys.js';

const job = (system: string, user: string, sampling: GenerationJobData['sampling'] = { temperature: 0 }) =>
  ({
    requestId: 'r',
    deployment: 'tiny',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    sampling,
    stop: [],
    enqueuedAt: 0,
  }) satisfies GenerationJobData;

describe('line keys', () => {
  it('gives lines with the same leading turns one prefix key, whatever their last turn', () => {
    expect(prefixKey(job('grade this', 'one'))).toBe(prefixKey(job('grade this', 'two')));
    expect(prefixKey(job('grade this', 'one'))).not.toBe(prefixKey(job('translate this', 'one')));
    expect(prefixKey(job('s', 'u'))).not.toBe(prefixKey({ ...job('s', 'u'), deployment: 'other' }));
  });

  it('gives bodies that differ only in key order one repeat key, when the reply is greedy or seeded', () => {
    const a = { model: 'tiny', messages: [{ role: 'user', content: 'x' }], temperature: 0 };
    const b = { temperature: 0, messages: [{ content: 'x', role: 'user' }], model: 'tiny' };
    expect(repeatKey(job('s', 'x'), '/v1/chat/completions', a)).toBe(
      repeatKey(job('s', 'x'), '/v1/chat/completions', b),
    );
    expect(repeatKey(job('s', 'x', { temperature: 1, seed: 7 }), '/v1/chat/completions', a)).not.toBeNull();
    expect(repeatKey(job('s', 'x'), '/v1/chat/completions', a)).not.toBe(
      repeatKey(job('s', 'x'), '/v1/chat/completions', { ...a, max_tokens: 9 }),
    );
  });

  it('gives a line that samples without a seed no repeat key: it always runs', () => {
    expect(repeatKey(job('s', 'x', { temperature: 0.7 }), '/v1/chat/completions', {})).toBeNull();
  });

  it('writes canonical JSON with sorted keys at every level', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: 'x', u: undefined })).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
  });
});
