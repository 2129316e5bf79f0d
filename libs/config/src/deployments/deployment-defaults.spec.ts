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

  it('reads the host memory for the prompt cache in MiB: unset is left to the worker, 0 is none', () => {
    const ram = (value?: string) =>
      loadConfig(value === undefined ? {} : { PROMPT_CACHE_RAM: value }).deployments[0]!.promptCacheRam;
    expect([ram(), ram('0'), ram('2048')]).toEqual([null, 0, 2048]);
    expect(configError({ PROMPT_CACHE_RAM: '-1' }).message).toContain('PROMPT_CACHE_RAM must be an integer from 0');
  });
});
