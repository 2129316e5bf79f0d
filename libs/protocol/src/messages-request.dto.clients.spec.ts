import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { MessagesRequestDto } from './messages-request.dto.js';
import { validateDto } from './validate-dto.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

/** The bodies Anthropic's current clients send (Claude Code, the SDK): system turns, thinking, output_config. */

const parse = (body: Record<string, unknown>) =>
  validateDto(MessagesRequestDto, { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], ...body });

const valid = (body: Record<string, unknown> = {}): MessagesRequestDto => {
  const result = parse(body);
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
};

const checked = (body: Record<string, unknown>, contextSize = 4096): MessagesRequestDto => {
  const dto = valid(body);
  checkGeneration(dto, deploymentTraits({ contextSize }), IMAGE_LIMITS);
  return dto;
};

const problemOf = (body: Record<string, unknown>) => {
  const result = parse(body);
  return result.ok ? null : result.problem;
};

describe('system turns inside messages', () => {
  it('folds them into the system prompt after the system field, in order, as text', () => {
    const dto = checked({
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: 'One.' },
        { role: 'system', content: 'Now in French.' },
        { role: 'assistant', content: 'Un.' },
        { role: 'system', content: [{ type: 'text', text: 'Count on.' }] },
        { role: 'user', content: 'Two.' },
      ],
    });
    expect(jobOf(dto, 'r', deploymentTraits()).messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nNow in French.\n\nCount on.' },
      { role: 'user', content: 'One.' },
      { role: 'assistant', content: 'Un.' },
      { role: 'user', content: 'Two.' },
    ]);
  });

  it('make a system prompt when the body has no system field, and may end the list', () => {
    const dto = checked({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Reply in one word.' },
      ],
    });
    expect(jobOf(dto, 'r', deploymentTraits()).messages).toEqual([
      { role: 'system', content: 'Reply in one word.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('take text only, and leave a conversation that needs a user message', () => {
    expect(problemOf({ messages: [{ role: 'system', content: [{ type: 'image', source: {} }] }] })?.message).toContain(
      'a system message takes text',
    );
    const onlySystem = valid({ messages: [{ role: 'system', content: 'x' }] });
    expect(requestProblem(() => checkGeneration(onlySystem, deploymentTraits(), IMAGE_LIMITS)).param).toBe('messages');
    const prefilled = valid({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
        { role: 'system', content: 'z' },
      ],
    });
    expect(requestProblem(() => checkGeneration(prefilled, deploymentTraits(), IMAGE_LIMITS)).param).toBe(
      'messages[1].role',
    );
  });
});

describe('thinking, context_management and output_config', () => {
  it('takes adaptive and enabled thinking, and replayed thinking and redacted_thinking blocks, left out of the prompt', () => {
    for (const thinking of [{ type: 'adaptive' }, { type: 'enabled', budget_tokens: 8 }]) {
      const dto = checked({
        thinking,
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
        output_config: { effort: 'high' },
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'They greet me.', signature: 'c2lnbmF0dXJl' },
              { type: 'redacted_thinking', data: 'b3BhcXVl' },
              { type: 'text', text: 'Hello.' },
            ],
          },
          { role: 'user', content: 'Again' },
        ],
      });
      expect(dto.thinkingEnabled).toBe(true);
      expect(jobOf(dto, 'r', deploymentTraits()).messages[1]).toEqual({ role: 'assistant', content: 'Hello.' });
    }
  });

  it('holds the reply to output_config.format as chat holds it to a json_schema response_format', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const job = jobOf(checked({ output_config: { format: { type: 'json_schema', schema } } }), 'r', deploymentTraits());
    expect(job.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema });
    expect(jobOf(checked({}), 'r', deploymentTraits()).responseFormat).toBeUndefined();
  });

  it('refuses a malformed output_config.format and an invalid schema; takes a format beside tools', () => {
    expect(problemOf({ output_config: { format: { type: 'json_object' } } })?.param).toBe('output_config.format.type');
    expect(problemOf({ output_config: { format: { type: 'json_schema' } } })?.param).toBe(
      'output_config.format.schema',
    );
    const odd = valid({
      output_config: { format: { type: 'json_schema', schema: { type: 'string', minLength: 'x' } } },
    });
    expect(requestProblem(() => checkGeneration(odd, deploymentTraits(), IMAGE_LIMITS)).param).toMatch(
      /^output_config\.format\.schema/,
    );
    const withTools = valid({
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
    expect(() => checkGeneration(withTools, deploymentTraits(), IMAGE_LIMITS)).not.toThrow();
  });
});

describe('max_tokens past the context', () => {
  it('is not refused: the job asks the worker to cut it to the room the prompt leaves', () => {
    const job = jobOf(checked({ max_tokens: 32000 }, 512), 'r', deploymentTraits({ contextSize: 512 }));
    expect(job).toMatchObject({ maxTokens: 32000, clampToContext: true });
  });

  it('still refuses a budget for thinking of max_tokens or more', () => {
    const dto = valid({ max_tokens: 8, thinking: { type: 'enabled', budget_tokens: 8 } });
    expect(requestProblem(() => checkGeneration(dto, deploymentTraits(), IMAGE_LIMITS)).param).toBe(
      'thinking.budget_tokens',
    );
  });
});
