import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('keeps only the digest of the admin key, and serves no dashboard without one', () => {
    expect(loadConfig({}).adminKeySha256).toBeNull();
    const digest = '2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b';
    expect(loadConfig({ ADMIN_KEY: 'secret' }).adminKeySha256).toBe(digest);
    expect(loadConfig({ ADMIN_KEY_SHA256: digest.toUpperCase() }).adminKeySha256).toBe(digest);
  });

  it('refuses a malformed admin key digest, or both forms at once', () => {
    expect(configError({ ADMIN_KEY_SHA256: 'abc' }).message).toContain('ADMIN_KEY_SHA256 must be 64 hex digits');
    expect(configError({ ADMIN_KEY: 'a', ADMIN_KEY_SHA256: '0'.repeat(64) }).message).toContain('exclusive');
  });
});
