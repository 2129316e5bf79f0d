import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { ResponseRequestDto } from './response-request.dto.js';
import { validateDto } from './validate-dto.js';
import { deploymentTraits, IMAGE_LIMITS, requestProblem } from '../../../test/support/request-bodies.js';

const deployment = deploymentTraits();

const parse = (body: Record<string, unknown>) => validateDto(ResponseRequestDto, { model: 'm', ...body });
const parsed = (body: Record<string, unknown>): ResponseRequestDto => {
  const result = parse(body);
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
};

describe('ResponseRequestDto validation', () => {
  it('takes a string or items, and names the item at fault', () => {
    expect(parse({ input: 'Hi' }).ok).toBe(true);
    expect(parse({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] }).ok).toBe(true);
    const bad = parse({
      input: [
        { role: 'user', content: 'x' },
        { type: 'function_call', call_id: 'c', name: 'bad name' },
      ],
    });
    expect(bad).toMatchObject({
      ok: false,
      problem: { param: 'input', message: expect.stringContaining('input[1].name') },
    });
    expect(parse({ input: [{ type: 'item_reference', id: 'x' }] })).toMatchObject({
      ok: false,
      problem: { message: expect.stringContaining('unsupported type "item_reference"') },
    });
    expect(parse({ input: [] }).ok).toBe(false);
    expect(parse({ input: 42 }).ok).toBe(false);
  });

  it('refuses tools other than functions, naming the field', () => {
    expect(parse({ input: 'x', tools: [{ type: 'web_search' }] })).toMatchObject({
      ok: false,
      problem: { param: 'tools[0].type' },
    });
  });
});

describe('ResponseRequestDto.toJob', () => {
  it('puts instructions first, then earlier items, then the input, with calls joined to the assistant turn', () => {
    const dto = parsed({
      instructions: 'Be brief.',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: '{"t":20}' }],
      max_output_tokens: 32,
      temperature: 0,
    });
    dto.continueFrom([
      { role: 'user', content: 'Weather?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ]);
    dto.check(deployment, IMAGE_LIMITS);
    const job = dto.toJob('r', deployment, 5);
    expect(job.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{}' }] },
      { role: 'tool', content: '{"t":20}', toolCallId: 'call_1' },
    ]);
    expect(job).toMatchObject({ maxTokens: 32, sampling: { temperature: 0 }, stop: [], enqueuedAt: 5 });
  });

  it('maps tools, tool_choice and text.format to the job', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const named = parsed({ input: 'x', tools, tool_choice: { type: 'function', name: 'f' } });
    named.check(deployment, IMAGE_LIMITS);
    expect(named.toJob('r', deployment)).toMatchObject({
      tools: [{ name: 'f', parameters: { type: 'object' } }],
      toolChoice: { name: 'f' },
    });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const structured = parsed({ input: 'x', text: { format: { type: 'json_schema', name: 's', schema } } });
    structured.check(deployment, IMAGE_LIMITS);
    expect(structured.toJob('r', deployment).responseFormat).toEqual({ type: 'json_schema', name: 's', schema });
    const json = parsed({ input: 'x', text: { format: { type: 'json_object' } } });
    expect(json.toJob('r', deployment).responseFormat).toEqual({ type: 'json_object' });
  });

  it('asks for one call at most with parallel_tool_calls false, and leaves the engine its default otherwise', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const one = parsed({ input: 'x', tools, parallel_tool_calls: false });
    one.check(deployment, IMAGE_LIMITS);
    expect(one.toJob('r', deployment).parallelToolCalls).toBe(false);
    const many = parsed({ input: 'x', tools, parallel_tool_calls: true });
    many.check(deployment, IMAGE_LIMITS);
    expect(many.toJob('r', deployment).parallelToolCalls).toBeUndefined();
  });
});

describe('ResponseRequestDto.check', () => {
  it('refuses an output for a call no earlier item made', () => {
    const dto = parsed({ input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] });
    expect(requestProblem(() => dto.check(deployment, IMAGE_LIMITS))).toMatchObject({ param: 'input[0].call_id' });
  });

  it('refuses images on a text-only deployment, and URLs anywhere', () => {
    const image = (url: string) => ({
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }] }],
    });
    expect(
      requestProblem(() => parsed(image('data:image/png;base64,AAAA')).check(deployment, IMAGE_LIMITS)),
    ).toMatchObject({
      param: 'input[0].content[0].type',
    });
    const vision = { ...deployment, vision: true };
    expect(requestProblem(() => parsed(image('http://169.254.169.254/')).check(vision, IMAGE_LIMITS))).toMatchObject({
      param: 'input[0].content[0].image_url',
      code: 'invalid_image_url',
    });
  });

  it('refuses background with store false or with stream, a format beside tools, and an unknown tool_choice', () => {
    expect(
      requestProblem(() => parsed({ input: 'x', background: true, store: false }).check(deployment, IMAGE_LIMITS))
        .param,
    ).toBe('store');
    expect(
      requestProblem(() => parsed({ input: 'x', background: true, stream: true }).check(deployment, IMAGE_LIMITS))
        .param,
    ).toBe('stream');
    const tools = [{ type: 'function', name: 'f' }];
    expect(
      requestProblem(() =>
        parsed({ input: 'x', tools, text: { format: { type: 'json_object' } } }).check(deployment, IMAGE_LIMITS),
      ).param,
    ).toBe('text.format');
    expect(
      requestProblem(() =>
        parsed({ input: 'x', tools, tool_choice: { type: 'function', name: 'g' } }).check(deployment, IMAGE_LIMITS),
      ).param,
    ).toBe('tool_choice.name');
    expect(
      requestProblem(() => parsed({ input: 'x', max_output_tokens: 4096 }).check(deployment, IMAGE_LIMITS)).param,
    ).toBe('max_output_tokens');
  });
});
