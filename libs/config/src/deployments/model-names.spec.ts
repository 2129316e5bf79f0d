import { describe, expect, it } from '@jest/globals';
import { configError } from '../../../../test/support/config-error.js';
import type { DeploymentConfig, ModelNamesConfig } from '../config.types.js';
import { loadConfig } from '../load-config.js';
import { ModelNames, checkModelNames, globRegExp, parseModelAliases } from './model-names.js';

const base = loadConfig({ MODEL: 'tiny', MODEL_ID: 'small' }).deployments[0]!;
const deployments: DeploymentConfig[] = [
  { ...base, id: 'small' },
  { ...base, id: 'large' },
];
const names = (aliases: Array<[string, string]>, defaultDeployment: string | null = null): ModelNamesConfig => ({
  aliases: aliases.map(([name, deployment]) => ({ name, deployment })),
  defaultDeployment,
});
const reach = (table: ModelNamesConfig, model: string): string | undefined =>
  new ModelNames(deployments, table).resolve(model)?.id;

describe('ModelNames', () => {
  const table = names([
    ['gpt-5*', 'small'],
    ['gpt-5-pro', 'large'],
    ['claude-*', 'large'],
    ['claude-sonnet-*', 'small'],
    ['o?-mini', 'small'],
  ]);

  it('reaches a deployment by its own id, which no alias can take over', () => {
    expect(reach(table, 'small')).toBe('small');
    expect(reach(names([['l*', 'small']]), 'large')).toBe('large');
  });

  it('prefers an exact name to any pattern, even one declared before it', () => {
    expect(reach(table, 'gpt-5-pro')).toBe('large');
    expect(reach(table, 'gpt-5-codex')).toBe('small');
  });

  it('takes the first pattern that matches, in the order declared', () => {
    expect(reach(table, 'claude-sonnet-4-5')).toBe('large');
    expect(reach(table, 'o4-mini')).toBe('small');
    expect(reach(table, 'o10-mini')).toBeUndefined();
  });

  it('sends any other name to the default deployment, or nowhere without one', () => {
    expect(reach(table, 'llama-3')).toBeUndefined();
    expect(reach({ ...table, defaultDeployment: 'large' }, 'llama-3')).toBe('large');
    expect(reach({ ...table, defaultDeployment: 'large' }, 'gpt-5')).toBe('small');
  });

  it('lists the exact names only, in the order declared', () => {
    const listed = new ModelNames(
      deployments,
      names([
        ['b', 'large'],
        ['gpt-*', 'small'],
        ['a', 'small'],
      ]),
    ).listable();
    expect(listed.map((a) => [a.name, a.deployment.id])).toEqual([
      ['b', 'large'],
      ['a', 'small'],
    ]);
  });

  it('matches patterns literally apart from * and ?', () => {
    expect(globRegExp('a.b*').test('a.b-c')).toBe(true);
    expect(globRegExp('a.b*').test('axb-c')).toBe(false);
    expect(globRegExp('x(1)+').test('x(1)+')).toBe(true);
    expect(globRegExp('*').test('')).toBe(true);
  });
});

describe('the alias table at start-up', () => {
  const problems = (table: ModelNamesConfig): string[] => {
    const found: string[] = [];
    checkModelNames(table, deployments, found, (a) => (a ? `alias ${a.name}` : 'default'));
    return found;
  };

  it('accepts aliases of deployments that exist', () => {
    expect(problems(names([['gpt-5*', 'small']], 'large'))).toEqual([]);
  });

  it('names the alias that reaches an unknown deployment, and the deployments there are', () => {
    expect(problems(names([['gpt-5*', 'smal']]))).toEqual([
      'alias gpt-5*: "gpt-5*" reaches "smal", which is not a deployment (deployments: "small", "large")',
    ]);
    expect(problems(names([], 'nope'))).toEqual([
      'default: "nope" is not a deployment (deployments: "small", "large")',
    ]);
  });

  it("refuses a name given twice, and an exact name that is already a deployment's id", () => {
    expect(
      problems(
        names([
          ['a', 'small'],
          ['a', 'large'],
          ['large', 'small'],
        ]),
      ),
    ).toEqual(['alias a: "a" is given twice', 'alias large: "large" is already a deployment\'s id']);
  });
});

describe('MODEL_ALIASES', () => {
  it('reads name=deployment pairs in order', () => {
    const config = loadConfig({
      MODEL: 'tiny',
      MODEL_ALIASES: 'gpt-4o=conveyor-tiny, claude-*=conveyor-tiny,*=conveyor-tiny',
    });
    expect(config.modelNames).toEqual(
      names([
        ['gpt-4o', 'conveyor-tiny'],
        ['claude-*', 'conveyor-tiny'],
        ['*', 'conveyor-tiny'],
      ]),
    );
  });

  it('is empty when unset', () => {
    expect(loadConfig({ MODEL: 'tiny' }).modelNames).toEqual(names([]));
  });

  it('fails start-up with one message for an alias of an unknown deployment', () => {
    const error = configError({ MODEL: 'tiny', MODEL_ALIASES: 'gpt-5*=gpt-5' });
    expect(error.problems).toEqual([
      'MODEL_ALIASES: "gpt-5*" reaches "gpt-5", which is not a deployment (deployments: "conveyor-tiny")',
    ]);
  });

  it('refuses a pair it cannot read', () => {
    const found: string[] = [];
    expect(parseModelAliases('a=b,c,d=e=f, x y=b', found)).toEqual([{ name: 'a', deployment: 'b' }]);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^MODEL_ALIASES: "c" is not name=deployment/);
  });
});
