import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { DeploymentTraits } from './deployment-traits.js';
import { MessagesRequestDto } from './messages-request.dto.js';
import { RequestProblem } from './request-problem.js';
import { validateDto } from './validate-dto.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const parse = (body: Record<string, unknown>) =>
  validateDto(MessagesRequestDto, {
    model: 'm',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'Hi' }],
    ...body,
  });

const valid = (body: Record<string, unknown> = {}): MessagesRequestDto => {
  const result = parse(body);
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
};

const problemOf = (body: Record<string, unknown>) => {
  const result = parse(body);
  return result.ok ? null : result.problem;
};

const refusal = (dto: MessagesRequestDto, traits: Partial<DeploymentTraits> = {}): RequestProblem =>
  requestProblem(() => checkGeneration(dto, deploymentTraits(traits), IMAGE_LIMITS));

describe('MessagesRequestDto validation', () => {
  it.each<[string, Record<string, unknown>, string | null]>([
    ['no max_tokens', { max_tokens: undefined }, 'max_tokens'],
    ['a tool role in messages', { messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    ['an unknown block', { messages: [{ role: 'user', content: [{ type: 'document' }] }] }, 'messages[0].content'],
    [
      'a tool_use from the user',
      { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] }] },
      'messages[0].content',
    ],
    [
      'an image by URL',
      { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://x' } }] }] },
      'messages[0].content',
    ],
    ['a tool without input_schema', { tools: [{ name: 'f' }] }, 'tools[0].input_schema'],
    ['a server tool', { tools: [{ type: 'web_search_20250305', name: 'w', input_schema: {} }] }, 'tools[0].type'],
    ['tool_choice of an unknown type', { tool_choice: { type: 'required' } }, 'tool_choice.type'],
    ['tool_choice tool without a name', { tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    ['thinking without a budget', { thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    ['system as a number', { system: 3 }, 'system'],
  ])('refuses %s, naming the field', (_name, body, param) => {
    expect(problemOf(body)?.param).toBe(param);
  });

  it('takes every block a conversation with tools carries', () => {
    expect(
      problemOf({
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hm', signature: 's' },
              { type: 'text', text: 'Let me look.' },
              { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Snow' }] },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
        tools: [{ name: 'weather', input_schema: { type: 'object' } }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 4 },
        stop_sequences: ['END'],
        metadata: { user_id: 'u' },
      }),
    ).toBeNull();
  });
});

describe('MessagesRequestDto.check and toJob', () => {
  it('makes the job a chat request would: system turn, tool results as tool turns, calls on the assistant turn', () => {
    const dto = valid({
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Snow' },
            { type: 'text', text: 'Thanks.' },
          ],
        },
      ],
      tools: [{ name: 'weather', description: 'w', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
      stop_sequences: ['END'],
      temperature: 0.5,
      top_k: 5,
    });
    checkGeneration(dto, deploymentTraits(), IMAGE_LIMITS);
    const job = jobOf(dto, 'r', deploymentTraits(), 7);
    expect(job.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Oslo"}' }],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: 'Snow' },
      { role: 'user', content: 'Thanks.' },
    ]);
    expect(job).toMatchObject({
      requestId: 'r',
      deployment: 'd',
      tools: [{ name: 'weather', description: 'w', parameters: { type: 'object' } }],
      toolChoice: 'required',
      maxTokens: 16,
      stop: ['END'],
      sampling: { temperature: 0.5, topK: 5 },
      enqueuedAt: 7,
    });
  });

  it('asks for one call at most when tool_choice disables parallel tool use', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const one = valid({ tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    expect(jobOf(one, 'r', deploymentTraits()).parallelToolCalls).toBe(false);
    expect(
      jobOf(valid({ tools, tool_choice: { type: 'auto' } }), 'r', deploymentTraits()).parallelToolCalls,
    ).toBeUndefined();
  });

  it('maps tool_choice tool to a named call, and none to no tools at all', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    expect(
      jobOf(valid({ tools, tool_choice: { type: 'tool', name: 'f' } }), 'r', deploymentTraits()).toolChoice,
    ).toEqual({
      name: 'f',
    });
    const none = jobOf(valid({ tools, tool_choice: { type: 'none' } }), 'r', deploymentTraits());
    expect(none.tools).toBeUndefined();
    expect(none.toolChoice).toBeUndefined();
  });

  it('refuses a tool_result that answers no call, a prefilled reply, and a thinking budget over max_tokens', () => {
    expect(
      refusal(valid({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] }] })).param,
    ).toBe('messages[0].content[0].tool_use_id');
    expect(
      refusal(
        valid({
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hel' },
          ],
        }),
      ).param,
    ).toBe('messages[1].role');
    expect(refusal(valid({ thinking: { type: 'enabled', budget_tokens: 16 } })).param).toBe('thinking.budget_tokens');
  });

  it('refuses an image for a text deployment, and on a vision one refers to it by hash in the turn', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
      ],
    };
    expect(refusal(valid(body)).param).toBe('messages[0].content[1].type');
    const dto = valid(body);
    const checked = checkGeneration(dto, deploymentTraits({ vision: true }), IMAGE_LIMITS);
    const [image] = checked.images();
    expect(image?.ref).toMatchObject({ mime: 'image/png', width: 1, height: 1 });
    expect(checked.toJob('r').messages[0]).toEqual({
      role: 'user',
      content: 'What is it?',
      parts: [
        { type: 'text', text: 'What is it?' },
        { type: 'image', image: image!.ref },
      ],
    });
  });

  it('returns thinking unless it is disabled or omitted', () => {
    expect(valid().thinkingEnabled).toBe(false);
    expect(valid({ thinking: { type: 'enabled', budget_tokens: 4 } }).thinkingEnabled).toBe(true);
    expect(valid({ thinking: { type: 'adaptive' } }).thinkingEnabled).toBe(true);
    expect(valid({ thinking: { type: 'adaptive', display: 'omitted' } }).thinkingEnabled).toBe(false);
    expect(valid({ thinking: { type: 'disabled' } }).thinkingEnabled).toBe(false);
  });
});
