import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { LARK_KEYWORD } from '@conveyor/structured';
import { ResponseRequestDto } from './response-request.dto.js';
import { validateDto } from './validate-dto.js';
import { decodeReasoning, encodeReasoning } from './reasoning-content.js';
import { PATCH_GRAMMAR, codexRequest } from '../../../test/support/codex-request.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

const deployment = deploymentTraits();

const parse = (body: Record<string, unknown>) => validateDto(ResponseRequestDto, { model: 'm', ...body });
const parsed = (body: Record<string, unknown>): ResponseRequestDto => {
  const result = parse(body);
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
};

describe('ResponseRequestDto validation', () => {
  it("takes OpenAI's metadata and refuses more (it is stored with the response and served with it)", () => {
    expect(parse({ input: 'Hi', metadata: { team: 'a' } }).ok).toBe(true);
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v']));
    for (const metadata of [many, { k: 'v'.repeat(1_000_000) }, { ['k'.repeat(65)]: 'v' }])
      expect(parse({ input: 'Hi', metadata })).toMatchObject({ ok: false, problem: { param: 'metadata' } });
  });

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

  it('refuses a tool of no known type when checked, naming the field', () => {
    const dto = parsed({ input: 'x', tools: [{ type: 'teleport' }] });
    expect(requestProblem(() => checkGeneration(dto, deployment, IMAGE_LIMITS)).param).toBe('tools[0].type');
  });
});

describe('ResponseRequestDto with the tools Codex sends', () => {
  it("offers functions, a namespace's functions under qualified names and custom tools, never hosted ones", () => {
    const dto = parsed(codexRequest('m'));
    checkGeneration(dto, deployment, IMAGE_LIMITS);
    const job = jobOf(dto, 'r', deployment, 5);
    expect(job.tools?.map((t) => t.name)).toEqual([
      'exec_command',
      'view_image',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__wait_agent',
      'apply_patch',
    ]);
    const patch = job.tools?.find((t) => t.name === 'apply_patch');
    expect(patch?.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string', [LARK_KEYWORD]: PATCH_GRAMMAR } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(patch?.description).toContain(PATCH_GRAMMAR);
    expect(job.tools?.find((t) => t.name === 'multi_agent_v1__close_agent')?.description).toContain(
      'multi_agent_v1: Tools for spawning',
    );
    // Developer messages are system turns, after the instructions.
    expect(job.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'user']);
  });

  it("refuses a tool_choice forcing a hosted tool, and names a namespace's function by its own name", () => {
    const forced = parsed({ ...codexRequest('m'), tool_choice: { type: 'web_search' } });
    expect(requestProblem(() => checkGeneration(forced, deployment, IMAGE_LIMITS))).toMatchObject({
      param: 'tool_choice.type',
      message: expect.stringContaining('web_search'),
    });
    const onlyHosted = parsed({ input: 'x', tools: [{ type: 'file_search' }], tool_choice: 'required' });
    expect(requestProblem(() => checkGeneration(onlyHosted, deployment, IMAGE_LIMITS)).param).toBe('tool_choice');
    const named = parsed({
      ...codexRequest('m'),
      tool_choice: { type: 'function', name: 'close_agent', namespace: 'multi_agent_v1' },
    });
    checkGeneration(named, deployment, IMAGE_LIMITS);
    expect(jobOf(named, 'r', deployment).toolChoice).toEqual({ name: 'multi_agent_v1__close_agent' });
    const custom = parsed({ ...codexRequest('m'), tool_choice: { type: 'custom', name: 'apply_patch' } });
    checkGeneration(custom, deployment, IMAGE_LIMITS);
    expect(jobOf(custom, 'r', deployment).toolChoice).toEqual({ name: 'apply_patch' });
  });

  it('refuses a malformed namespace or custom tool, and two tools the model would call alike', () => {
    const problem = (tools: unknown[]) =>
      requestProblem(() => checkGeneration(parsed({ input: 'x', tools }), deployment, IMAGE_LIMITS)).param;
    expect(problem([{ type: 'namespace', name: 'ns', tools: [] }])).toBe('tools[0].tools');
    expect(problem([{ type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }])).toBe(
      'tools[0].tools[0].type',
    );
    expect(problem([{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'bad name' }] }])).toBe(
      'tools[0].tools[0].name',
    );
    expect(problem([{ type: 'custom', name: 'p', format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }])).toBe(
      'tools[0].format.syntax',
    );
    expect(
      problem([
        { type: 'function', name: 'ns__f' },
        { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] },
      ]),
    ).toBe('tools[1].tools[0].name');
  });

  it('renders earlier namespaced and custom calls as the model was offered them, and their outputs as text', () => {
    const dto = parsed({
      ...codexRequest('m'),
      input: [
        { type: 'message', role: 'user', content: 'Patch it.' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeReasoning('I will patch.') },
        { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
        { type: 'function_call', call_id: 'c2', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{}' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done.' },
        {
          type: 'function_call_output',
          call_id: 'c2',
          output: [
            { type: 'input_text', text: 'closed' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
      ],
    });
    checkGeneration(dto, deployment, IMAGE_LIMITS);
    expect(jobOf(dto, 'r', deployment).messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' }) },
          { id: 'c2', name: 'multi_agent_v1__close_agent', arguments: '{}' },
        ],
      },
      { role: 'tool', content: 'Done.', toolCallId: 'c1' },
      { role: 'tool', content: 'closed', toolCallId: 'c2' },
    ]);
  });

  it('takes back reasoning whose encrypted_content this server made, and refuses an altered one', () => {
    const item = (encrypted_content: string) => ({
      input: [
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(parse(item(encodeReasoning('Thinking…'))).ok).toBe(true);
    expect(decodeReasoning(encodeReasoning('Thinking…'))).toBe('Thinking…');
    expect(parse(item(`${encodeReasoning('Thinking…')}x`))).toMatchObject({
      ok: false,
      problem: { message: expect.stringContaining('input[0].encrypted_content') },
    });
    expect(parse(item('gAAAAB-opaque')).ok).toBe(false);
  });

  it('wants encrypted reasoning only when include asks for it', () => {
    expect(parsed(codexRequest('m')).wantsEncryptedReasoning()).toBe(true);
    expect(parsed({ input: 'x' }).wantsEncryptedReasoning()).toBe(false);
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
    dto.continues([
      { role: 'user', content: 'Weather?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ]);
    checkGeneration(dto, deployment, IMAGE_LIMITS);
    const job = jobOf(dto, 'r', deployment, 5);
    expect(job.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{}' }] },
      { role: 'tool', content: '{"t":20}', toolCallId: 'call_1' },
    ]);
    expect(job).toMatchObject({ maxTokens: 32, sampling: { temperature: 0 }, stop: [], enqueuedAt: 5 });
  });

  it('carries prompt_cache_key to the job as its cache key, for routing', () => {
    const keyed = parsed({ input: 'x', prompt_cache_key: 'session-7' });
    checkGeneration(keyed, deployment, IMAGE_LIMITS);
    expect(jobOf(keyed, 'r', deployment).cacheKey).toBe('session-7');
    const plain = parsed({ input: 'x' });
    checkGeneration(plain, deployment, IMAGE_LIMITS);
    expect(jobOf(plain, 'r', deployment).cacheKey).toBeUndefined();
  });

  it('maps tools, tool_choice and text.format to the job', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const named = parsed({ input: 'x', tools, tool_choice: { type: 'function', name: 'f' } });
    checkGeneration(named, deployment, IMAGE_LIMITS);
    expect(jobOf(named, 'r', deployment)).toMatchObject({
      tools: [{ name: 'f', parameters: { type: 'object' } }],
      toolChoice: { name: 'f' },
    });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const structured = parsed({ input: 'x', text: { format: { type: 'json_schema', name: 's', schema } } });
    checkGeneration(structured, deployment, IMAGE_LIMITS);
    expect(jobOf(structured, 'r', deployment).responseFormat).toEqual({ type: 'json_schema', name: 's', schema });
    const json = parsed({ input: 'x', text: { format: { type: 'json_object' } } });
    expect(jobOf(json, 'r', deployment).responseFormat).toEqual({ type: 'json_object' });
  });

  it('asks for one call at most with parallel_tool_calls false, and leaves the engine its default otherwise', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const one = parsed({ input: 'x', tools, parallel_tool_calls: false });
    checkGeneration(one, deployment, IMAGE_LIMITS);
    expect(jobOf(one, 'r', deployment).parallelToolCalls).toBe(false);
    const many = parsed({ input: 'x', tools, parallel_tool_calls: true });
    checkGeneration(many, deployment, IMAGE_LIMITS);
    expect(jobOf(many, 'r', deployment).parallelToolCalls).toBeUndefined();
  });
});

describe('ResponseRequestDto.check', () => {
  it('refuses an output for a call no earlier item made', () => {
    const dto = parsed({ input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] });
    expect(requestProblem(() => checkGeneration(dto, deployment, IMAGE_LIMITS))).toMatchObject({
      param: 'input[0].call_id',
    });
  });

  it('refuses images on a text-only deployment, and URLs anywhere', () => {
    const image = (url: string) => ({
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }] }],
    });
    expect(
      requestProblem(() => checkGeneration(parsed(image('data:image/png;base64,AAAA')), deployment, IMAGE_LIMITS)),
    ).toMatchObject({
      param: 'input[0].content[0].type',
    });
    const vision = { ...deployment, vision: true };
    expect(
      requestProblem(() => checkGeneration(parsed(image('http://169.254.169.254/')), vision, IMAGE_LIMITS)),
    ).toMatchObject({
      param: 'input[0].content[0].image_url',
      code: 'invalid_image_url',
    });
  });

  it('refuses background with store false or with stream and an unknown tool_choice, and takes a format beside tools', () => {
    expect(
      requestProblem(() =>
        checkGeneration(parsed({ input: 'x', background: true, store: false }), deployment, IMAGE_LIMITS),
      ).param,
    ).toBe('store');
    expect(
      requestProblem(() =>
        checkGeneration(parsed({ input: 'x', background: true, stream: true }), deployment, IMAGE_LIMITS),
      ).param,
    ).toBe('stream');
    const tools = [{ type: 'function', name: 'f' }];
    const both = parsed({ input: 'x', tools, text: { format: { type: 'json_object' } } });
    checkGeneration(both, deployment, IMAGE_LIMITS);
    expect(jobOf(both, 'r', deploymentTraits()).responseFormat).toEqual({ type: 'json_object' });
    expect(
      requestProblem(() =>
        checkGeneration(
          parsed({ input: 'x', tools, tool_choice: { type: 'function', name: 'g' } }),
          deployment,
          IMAGE_LIMITS,
        ),
      ).param,
    ).toBe('tool_choice.name');
    expect(
      requestProblem(() => checkGeneration(parsed({ input: 'x', max_output_tokens: 4096 }), deployment, IMAGE_LIMITS))
        .param,
    ).toBe('max_output_tokens');
  });
});
