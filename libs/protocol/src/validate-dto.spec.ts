import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { validateDto, type Validated } from './validate-dto.js';

const minimal = () => ({ model: 'conveyor-tiny', messages: [{ role: 'user', content: 'Hello' }] });

const check = (body: unknown): Validated<ChatCompletionRequestDto> => validateDto(ChatCompletionRequestDto, body);

/** The problem of a body that must fail; fails the test when the body is accepted. */
function problemOf(body: unknown) {
  const result = check(body);
  if (result.ok) throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
  return result.problem;
}

describe('validateDto(ChatCompletionRequestDto)', () => {
  it('accepts a minimal body and returns a DTO instance carrying its values', () => {
    const result = check(minimal());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toBeInstanceOf(ChatCompletionRequestDto);
    expect(result.value.model).toBe('conveyor-tiny');
    expect(result.value.messages).toHaveLength(1);
    expect(result.value.messages[0]).toMatchObject({ role: 'user', content: 'Hello' });
  });

  it('treats null in every optional field as absent', () => {
    const optional = [
      'max_tokens',
      'max_completion_tokens',
      'temperature',
      'top_p',
      'top_k',
      'min_p',
      'repetition_penalty',
      'repeat_penalty',
      'presence_penalty',
      'frequency_penalty',
      'seed',
      'stop',
      'stream',
      'stream_options',
      'n',
      'tools',
      'tool_choice',
      'response_format',
      'logprobs',
      'top_logprobs',
      'logit_bias',
      'user',
    ];
    const body: Record<string, unknown> = minimal();
    for (const field of optional) body[field] = null;
    expect(check(body)).toMatchObject({ ok: true });
    // Also null in the optional field of a message and of a nested object.
    expect(check({ ...minimal(), messages: [{ role: 'user', content: 'x', name: null }] }).ok).toBe(true);
    expect(check({ ...minimal(), stream_options: { include_usage: null } }).ok).toBe(true);
  });

  it.each([
    ['an array', [minimal()]],
    ['null', null],
    ['a string', '{"model":"m"}'],
    ['a number', 42],
  ])('rejects %s as the body with no param', (_name, body) => {
    const problem = problemOf(body);
    expect(problem.param).toBeNull();
    expect(problem.message).toMatch(/JSON object/);
  });

  it('requires model and messages', () => {
    expect(problemOf({ messages: minimal().messages }).param).toBe('model');
    expect(problemOf({ model: '', messages: minimal().messages }).param).toBe('model');
    expect(problemOf({ model: 'm' }).param).toBe('messages');
    expect(problemOf({ model: 'm', messages: [] }).param).toBe('messages');
  });

  it('addresses a bad message content by its index', () => {
    const problem = problemOf({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 42 },
      ],
    });
    expect(problem.param).toBe('messages[1].content');
    expect(problem.message.startsWith('messages[1].content ')).toBe(true);
  });

  it('addresses a bad role', () => {
    const problem = problemOf({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] });
    expect(problem.param).toBe('messages[0].role');
    expect(problem.message).toMatch(/^messages\[0\]\.role must be one of system, developer, user, assistant, tool/);
  });

  it('asks a tool message for the call it answers', () => {
    const problem = problemOf({ model: 'm', messages: [{ role: 'tool', content: 'x' }] });
    expect(problem.param).toBe('messages[0].tool_call_id');
  });

  it('accepts every OpenAI role, developer included', () => {
    for (const role of ['system', 'developer', 'user', 'assistant']) {
      expect(check({ model: 'm', messages: [{ role, content: 'x' }] }).ok).toBe(true);
    }
  });

  it('addresses a top-level number out of range and names the path first in the message', () => {
    const problem = problemOf({ ...minimal(), temperature: 3 });
    expect(problem.param).toBe('temperature');
    expect(problem.message.startsWith('temperature ')).toBe(true);
    expect(problemOf({ ...minimal(), temperature: '0.5' }).param).toBe('temperature');
    expect(check({ ...minimal(), temperature: 0 }).ok).toBe(true);
    expect(check({ ...minimal(), temperature: 2 }).ok).toBe(true);
  });

  it('addresses a field of a nested object with a dotted path', () => {
    const problem = problemOf({ ...minimal(), stream: true, stream_options: { include_usage: 'yes' } });
    expect(problem.param).toBe('stream_options.include_usage');
    expect(problem.message.startsWith('stream_options.include_usage ')).toBe(true);
    expect(check({ ...minimal(), stream: true, stream_options: { include_usage: true } }).ok).toBe(true);
  });

  describe('message content', () => {
    it('accepts an array of text parts', () => {
      const content = [
        { type: 'text', text: 'first' },
        { type: 'text', text: 'second' },
      ];
      const result = check({ model: 'm', messages: [{ role: 'user', content }] });
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.value.messages[0].content).toEqual(content);
    });

    it('rejects a part of unknown type, naming the part', () => {
      const problem = problemOf({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'audio' }] }],
      });
      expect(problem.param).toBe('messages[0].content');
      expect(problem.message).toContain('part 1');
      expect(problem.message).toContain('"audio"');
    });

    it('rejects an empty parts array and a text part without text', () => {
      expect(problemOf({ model: 'm', messages: [{ role: 'user', content: [] }] }).param).toBe('messages[0].content');
      expect(problemOf({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }).param).toBe(
        'messages[0].content',
      );
    });
  });

  describe('stop', () => {
    it('accepts one string or an array of strings', () => {
      expect(check({ ...minimal(), stop: '\n' }).ok).toBe(true);
      expect(check({ ...minimal(), stop: ['END', '###'] }).ok).toBe(true);
    });

    it('accepts 16 sequences but not 17', () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
      expect(check({ ...minimal(), stop: many(16) }).ok).toBe(true);
      expect(problemOf({ ...minimal(), stop: many(17) }).param).toBe('stop');
    });

    it('rejects an empty string, alone or in a list, and a non-string entry', () => {
      expect(problemOf({ ...minimal(), stop: '' }).param).toBe('stop');
      expect(problemOf({ ...minimal(), stop: ['a', ''] }).param).toBe('stop');
      expect(problemOf({ ...minimal(), stop: ['a', 1] }).param).toBe('stop');
      expect(problemOf({ ...minimal(), stop: ['a', ''] }).message.startsWith('stop ')).toBe(true);
    });
  });

  it('accepts top_k -1 and 0 (both mean off) but not -2', () => {
    expect(check({ ...minimal(), top_k: -1 }).ok).toBe(true);
    expect(check({ ...minimal(), top_k: 0 }).ok).toBe(true);
    expect(problemOf({ ...minimal(), top_k: -2 }).param).toBe('top_k');
  });

  it('rejects max_tokens of 0 and non-integers, accepts 1', () => {
    expect(problemOf({ ...minimal(), max_tokens: 0 }).param).toBe('max_tokens');
    expect(problemOf({ ...minimal(), max_tokens: 1.5 }).param).toBe('max_tokens');
    expect(problemOf({ ...minimal(), max_completion_tokens: 0 }).param).toBe('max_completion_tokens');
    expect(check({ ...minimal(), max_tokens: 1 }).ok).toBe(true);
  });

  it('ignores unknown fields', () => {
    expect(check({ ...minimal(), some_future_option: { x: 1 } }).ok).toBe(true);
  });
});

describe('validateDto: a value of the wrong type is reported as such', () => {
  it.each([
    ['max_tokens', 'abc', /must be an integer/],
    ['temperature', '0.5', /must be a number/],
    ['top_k', '40', /must be an integer/],
    ['messages', 'hi', /must be an array/],
  ])('%s = %p', (field, value, message) => {
    const result = validateDto(ChatCompletionRequestDto, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      [field]: value,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problem.param).toBe(field);
      expect(result.problem.message).toMatch(message);
    }
  });

  it('names a non-object message as needing to be an object', () => {
    const result = validateDto(ChatCompletionRequestDto, { model: 'm', messages: ['oops'] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toEqual({ param: 'messages[0]', message: 'messages[0] must be an object' });
  });
});

describe('validateDto: hostile shapes', () => {
  it('refuses a body nested thousands of levels deep instead of overflowing the stack', () => {
    const deep = JSON.parse(
      `{"model":"m","messages":[{"role":"user","content":${'['.repeat(5000)}${']'.repeat(5000)}}]}`,
    );
    const result = validateDto(ChatCompletionRequestDto, deep);
    expect(result).toEqual({
      ok: false,
      problem: { param: null, message: 'The request body nests deeper than 32 levels.' },
    });
  });

  it('refuses content with a lone surrogate', () => {
    const result = validateDto(ChatCompletionRequestDto, {
      model: 'm',
      messages: [{ role: 'user', content: 'a\uD800b' }],
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem.param).toBe('messages[0].content');
  });
});
