import { describe, expect, it } from '@jest/globals';
import { deploymentsFileTables } from './deployments-file.reference.js';

const rows = (path: string): string[] =>
  deploymentsFileTables()
    .find((t) => t.path === path)!
    .table.split('\n')
    .slice(2);
const row = (path: string, field: string): string[] =>
  rows(path)
    .find((r) => r.startsWith(`| \`${field}\` |`))!
    .split(' | ')
    .map((c) => c.replace(/^\| | \|$/g, ''));

describe('the deployments file reference', () => {
  it('has a table for each object of the file, a row for each field', () => {
    expect(deploymentsFileTables().map((t) => t.path)).toEqual([
      'top level',
      'deployments[]',
      'deployments[].upstream',
      'deployments[].simulated',
      'deployments[].adapters[]',
      'deployments[].alias',
      'deployments[].defaults',
      'apiKeys[]',
      'apiKeys[].rateLimit',
      'apiKeys[].tokenLimit',
      'apiKeys[].webhook',
      'modelAliases[]',
    ]);
    expect(rows('deployments[]')).toHaveLength(26);
    expect(rows('deployments[].adapters[]')).toHaveLength(3);
  });

  it("lists a key's service tiers, token limits and webhook with what each takes", () => {
    expect(row('apiKeys[]', 'tiers')[2]).toBe('`auto`, `default`, `flex`, `priority`');
    expect(row('apiKeys[].tokenLimit', 'perDay')[2]).toBe('an integer of at least `1`');
    expect(row('apiKeys[].webhook', 'url')[1]).toBe('required');
  });

  it("reads what each field takes from the file's own checks", () => {
    expect(row('deployments[]', 'pool')).toEqual([
      '`pool`',
      '`cpu`',
      '`cpu`, `gpu`',
      'The worker pool that serves it.',
    ]);
    expect(row('deployments[]', 'contextSize').slice(1, 3)).toEqual(['`CONTEXT_SIZE`', 'an integer of at least `64`']);
    expect(row('deployments[]', 'id').slice(1, 3)).toEqual(['required', "1-128 letters, digits, '.', '_', '-' or '/'"]);
    expect(row('deployments[]', 'vision')[2]).toBe('`true` or `false`');
    expect(row('deployments[].defaults', 'temperature').slice(1, 3)).toEqual(['none', 'a number from `0` to `2`']);
    expect(row('apiKeys[].rateLimit', 'perSeconds').slice(1, 3)).toEqual([
      'required',
      'an integer from `1` to `86400`',
    ]);
    expect(row('top level', 'apiKeys').slice(1, 3)).toEqual(['none', 'a list (below)']);
    expect(row('deployments[]', 'upstream')[2]).toBe('an object (below)');
  });
});
