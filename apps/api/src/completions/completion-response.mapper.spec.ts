import { describe, it, expect } from '@jest/globals';
import type { ReplyEvent, TokenLogprob } from '@conveyor/queue';
import { CompletionChunkFormatter, LegacyLogprobs, toCompletion } from './completion-response.mapper.js';

/** Who a reply is from, as the completions mapper takes it. */
const who: Parameters<typeof toCompletion>[0] = { id: 'cmpl-abc', model: 'conveyor-tiny', created: 1_700_000_000 };
const usage = { promptTokens: 4, completionTokens: 3 };
const shared = {
  id: who.id,
  object: 'text_completion',
  created: who.created,
  model: who.model,
  system_fingerprint: null,
};

const bytes = (s: string) => [...Buffer.from(s, 'utf8')];
const token = (text: string, logprob: number, top: Array<[string, number]> = []): TokenLogprob => ({
  token: text,
  logprob,
  bytes: bytes(text),
  top: top.map(([t, l]) => ({ token: t, logprob: l, bytes: bytes(t) })),
});
const delta = (text: string, choice?: number, logprobs?: TokenLogprob[]): Extract<ReplyEvent, { type: 'delta' }> => ({
  type: 'delta',
  attempt: 1,
  seq: 1,
  text,
  ...(choice !== undefined ? { choice } : {}),
  ...(logprobs ? { logprobs } : {}),
});

describe('toCompletion', () => {
  it('builds a text_completion with each choice in order', () => {
    const reply = {
      choices: [
        { index: 0, text: ' there', finishReason: 'length' as const },
        { index: 1, text: '!', finishReason: 'stop' as const },
      ],
      usage,
    };
    expect(toCompletion(who, reply)).toEqual({
      ...shared,
      choices: [
        { text: ' there', index: 0, logprobs: null, finish_reason: 'length' },
        { text: '!', index: 1, logprobs: null, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
  });

  it('echoes each choice its own prompt: choice p * n + i is prompt p', () => {
    const choices = [0, 1, 2, 3].map((index) => ({ index, text: `-${index}`, finishReason: 'length' as const }));
    const completion = toCompletion(who, { choices, usage }, { echo: { prompts: ['A', 'B'], n: 2 } });
    expect(completion.choices.map((c) => c.text)).toEqual(['A-0', 'A-1', 'B-2', 'B-3']);
  });

  it('reports legacy logprobs, and empty lists when asked for on a choice with no tokens', () => {
    const logprobs = [
      token('Hi', -0.5, [
        ['Hi', -0.5],
        ['Yo', -1.5],
      ]),
      token(' you', -1, [[' you', -1]]),
    ];
    const completion = toCompletion(
      who,
      {
        choices: [
          { index: 0, text: 'Hi you', logprobs, finishReason: 'length' },
          { index: 1, text: '', finishReason: 'stop' },
        ],
        usage,
      },
      { logprobs: true },
    );
    expect(completion.choices[0].logprobs).toEqual({
      tokens: ['Hi', ' you'],
      token_logprobs: [-0.5, -1],
      top_logprobs: [{ Hi: -0.5, Yo: -1.5 }, { ' you': -1 }],
      text_offset: [0, 2],
    });
    expect(completion.choices[1].logprobs).toEqual({
      tokens: [],
      token_logprobs: [],
      top_logprobs: [],
      text_offset: [],
    });
  });
});

describe('LegacyLogprobs', () => {
  it('counts offsets in characters, and a character split across tokens once it is whole', () => {
    const euro = bytes('€'); // three bytes
    const split: TokenLogprob[] = [
      { token: 'a', logprob: -1, bytes: bytes('a'), top: [] },
      { token: '\uFFFD', logprob: -1, bytes: euro.slice(0, 2), top: [] },
      { token: '\uFFFD', logprob: -1, bytes: euro.slice(2), top: [] },
      { token: '😀', logprob: -1, bytes: bytes('😀'), top: [] },
      { token: 'b', logprob: -1, bytes: bytes('b'), top: [] },
    ];
    expect(new LegacyLogprobs().append(split).text_offset).toEqual([0, 1, 1, 2, 3]);
  });

  it('continues the offset across appends, from a given start', () => {
    const lp = new LegacyLogprobs(5);
    expect(lp.append([token('ab', -1)]).text_offset).toEqual([5]);
    expect(lp.append([token('c', -1), token('d', -1)]).text_offset).toEqual([7, 8]);
  });

  it('keeps the likelier of two alternatives sharing a text, and "__proto__" as a plain key', () => {
    const [top] = new LegacyLogprobs().append([
      token('x', -1, [
        ['x', -1],
        ['x', -3],
        ['__proto__', -4],
      ]),
    ]).top_logprobs;
    expect(Object.keys(top)).toEqual(['x', '__proto__']);
    expect(top.x).toBe(-1);
    expect(Object.getOwnPropertyDescriptor(top, '__proto__')?.value).toBe(-4);
  });
});

describe('CompletionChunkFormatter', () => {
  it('streams text chunks, then a final chunk per choice', () => {
    const f = new CompletionChunkFormatter(who, false);
    expect(f.openingChunks(2)).toEqual([]);
    expect(f.deltaChunks(delta('Hel'))).toEqual([
      { ...shared, choices: [{ text: 'Hel', index: 0, logprobs: null, finish_reason: null }] },
    ]);
    expect(f.deltaChunks(delta('lo', 1))[0].choices[0]).toMatchObject({ text: 'lo', index: 1 });
    expect(f.deltaChunks(delta(''))).toEqual([]);
    expect(f.finalChunks(['length', 'stop'], 2, usage)).toEqual([
      { ...shared, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }] },
      { ...shared, choices: [{ text: '', index: 1, logprobs: null, finish_reason: 'stop' }] },
    ]);
  });

  it('closes every choice even when the end event lists one reason', () => {
    expect(new CompletionChunkFormatter(who, false).finalChunks(['length'], 3, usage).map((c) => c.choices[0])).toEqual(
      [0, 1, 2].map((index) => ({ text: '', index, logprobs: null, finish_reason: 'length' })),
    );
  });

  it('with include_usage, marks chunks usage: null and ends with a usage chunk with no choices', () => {
    const f = new CompletionChunkFormatter(who, true);
    expect(f.deltaChunks(delta('x'))[0].usage).toBeNull();
    const final = f.finalChunks(['length'], 1, usage);
    expect(final[0].usage).toBeNull();
    expect(final[1]).toEqual({
      ...shared,
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
  });

  it('opens each choice with its prompt when echoing', () => {
    const f = new CompletionChunkFormatter(who, false, { echo: { prompts: ['A', 'B'], n: 1 } });
    expect(f.openingChunks(2).map((c) => c.choices[0])).toEqual([
      { text: 'A', index: 0, logprobs: null, finish_reason: null },
      { text: 'B', index: 1, logprobs: null, finish_reason: null },
    ]);
  });

  it('numbers text offsets per choice across deltas', () => {
    const f = new CompletionChunkFormatter(who, false, { logprobs: true });
    expect(f.deltaChunks(delta('ab', 0, [token('ab', -1, [['ab', -1]])]))[0].choices[0].logprobs).toEqual({
      tokens: ['ab'],
      token_logprobs: [-1],
      top_logprobs: [{ ab: -1 }],
      text_offset: [0],
    });
    expect(f.deltaChunks(delta('x', 1, [token('x', -2)]))[0].choices[0].logprobs?.text_offset).toEqual([0]);
    expect(f.deltaChunks(delta('c', 0, [token('c', -3)]))[0].choices[0].logprobs?.text_offset).toEqual([2]);
  });
});
