import { describe, expect, it } from '@jest/globals';
import { LEASE_SCRIPTS } from './lease.js';
import { loadScript } from './lua-scripts.js';

describe('loadScript', () => {
  it('registers a script with as many keys as its header names', () => {
    for (const script of LEASE_SCRIPTS) expect(loadScript(script).numberOfKeys).toBe(1);
  });

  it('refuses a script whose header does not say its KEYS and ARGV', () => {
    const unheaded = { name: 'unheaded', file: new URL(import.meta.url) };
    expect(() => loadScript(unheaded)).toThrow(/KEYS and ARGV/);
  });
});
