import { describe, expect, it } from '@jest/globals';
import { RequestProblem } from './request-problem.js';
import { checkTools, toJobTools, type DeclaredTool, type DeclaredTools } from './tool-checks.js';

const tool = (name: string, i: number, parameters?: Record<string, unknown>): DeclaredTool => ({
  name,
  ...(parameters ? { parameters } : {}),
  nameAt: `tools[${i}].name`,
  parametersAt: `tools[${i}].input_schema`,
});
const declared = (tools: DeclaredTool[], choice: DeclaredTools['choice'] = 'auto'): DeclaredTools => ({
  tools,
  choice,
  choiceAt: 'tool_choice.name',
  parallel: true,
});

function problem(tools: DeclaredTools, budget?: number): RequestProblem | null {
  try {
    checkTools(tools, budget);
    return null;
  } catch (err) {
    if (err instanceof RequestProblem) return err;
    throw err;
  }
}

describe('checkTools', () => {
  it('accepts tools with distinct names and a choice among them', () => {
    expect(problem(declared([tool('a', 0), tool('b', 1, { type: 'object' })], { name: 'b' }))).toBeNull();
    expect(problem(declared([], 'none'))).toBeNull();
  });

  it.each<[string, DeclaredTools, string]>([
    ['a name used twice, at the second', declared([tool('a', 0), tool('a', 1)]), 'tools[1].name'],
    [
      'a schema the grammar cannot enforce, at its keyword',
      declared([tool('a', 0, { type: 'nonsense' })]),
      'tools[0].input_schema.type',
    ],
    ['a forced call with no tools', declared([], 'required'), 'tool_choice'],
    ['a forced tool that is not among them', declared([tool('a', 0)], { name: 'b' }), 'tool_choice.name'],
  ])('refuses %s, naming the field where the body declares it', (_name, tools, param) => {
    expect(problem(tools)?.param).toBe(param);
  });

  it("refuses, given the reply's budget, a schema whose smallest call cannot fit it", () => {
    const big = { type: 'object', properties: { x: { type: 'string', minLength: 500 } }, required: ['x'] };
    expect(problem(declared([tool('a', 0, big)]))).toBeNull();
    expect(problem(declared([tool('a', 0, big)]), 16)?.param).toBe('max_tokens');
  });
});

describe('toJobTools', () => {
  it('offers no tools under "none", and says so when one call at most is wanted', () => {
    expect(toJobTools(declared([tool('a', 0)], 'none'))).toEqual({});
    expect(toJobTools({ ...declared([tool('a', 0)]), parallel: false })).toEqual({
      tools: [{ name: 'a' }],
      toolChoice: 'auto',
      parallelToolCalls: false,
    });
  });
});
