import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../load-config.js';
import { configError } from '../../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('reads the prompt cache mode: full unless told, exact, off, or a boolean for the default and off', () => {
    const mode = (value?: string) =>
      loadConfig(value === undefined ? {} : { PROMPT_CACHE: value }).deployments[0]!.promptCache;
    expect(mode()).toBe('full');
    expect([mode('full'), mode('off'), mode('exact')]).toEqual(['full', 'off', 'exact']);
    expect([mode('true'), mode('1'), mode('false'), mode('no')]).toEqual(['full', 'full', 'off', 'off']);
    expect(configError({ PROMPT_CACHE: 'sometimes' }).message).toContain(
      'PROMPT_CACHE must be one of full, exact, off',
    );
  });
});
