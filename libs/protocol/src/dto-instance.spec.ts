import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { ChatMessageDto } from './chat-message.dto.js';
import { WIDE_OBJECT_KEYS } from './dto-instance.js';
import { validateDto } from './validate-dto.js';

const WIDE = WIDE_OBJECT_KEYS * 4;
/** `n` fields nobody declared. */
const extras = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x_${i}`, i]));
const schema = (n: number) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }])),
});
const body = (fields: Record<string, unknown> = {}) => ({
  model: 'conveyor-tiny',
  messages: [{ role: 'user', content: 'Hello' }],
  ...fields,
});

describe('validateDto with objects of many keys', () => {
  it('keeps a free-form JSON Schema of 20,000 properties whole, and leaves the body as it came', () => {
    const format = { type: 'json_schema', json_schema: { name: 'form', schema: schema(20_000) } };
    const sent = body({ response_format: format });
    const copy = structuredClone(sent);
    const result = validateDto(ChatCompletionRequestDto, sent);
    if (!result.ok) throw new Error(result.problem.message);
    expect(result.value.response_format?.json_schema?.schema).toEqual(format.json_schema.schema);
    expect(sent).toEqual(copy);
  });

  it('still checks an object of a declared class that comes with many unknown fields', () => {
    const refused = validateDto(
      ChatCompletionRequestDto,
      body({ messages: [{ role: 'wizard', content: 'Hi', ...extras(WIDE) }] }),
    );
    expect(refused).toMatchObject({ ok: false, problem: { param: 'messages[0].role' } });
    const accepted = validateDto(
      ChatCompletionRequestDto,
      body({ messages: [{ role: 'user', content: 'Hi', ...extras(WIDE) }] }),
    );
    if (!accepted.ok) throw new Error(accepted.problem.message);
    expect(accepted.value.messages[0]).toBeInstanceOf(ChatMessageDto);
    expect(accepted.value.messages[0]).toMatchObject({ role: 'user', content: 'Hi' });
  });

  it('still checks a body that comes with many unknown fields', () => {
    expect(validateDto(ChatCompletionRequestDto, { ...body({ model: 7 }), ...extras(WIDE) })).toMatchObject({
      ok: false,
      problem: { param: 'model' },
    });
    const accepted = validateDto(ChatCompletionRequestDto, { ...body({ max_tokens: 5 }), ...extras(WIDE) });
    expect(accepted).toMatchObject({ ok: true, value: { model: 'conveyor-tiny', max_tokens: 5 } });
  });
});
