import { describe, expect, it } from '@jest/globals';
import { hashKey } from '@conveyor/config';
import { isAdminKey, presentedAdminKey } from './admin-credentials.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('admin credentials', () => {
  it('reads the key from Bearer, or from the password of HTTP Basic whatever the user name', () => {
    expect(presentedAdminKey('Bearer s3cret')).toBe('s3cret');
    expect(presentedAdminKey('bearer s3cret')).toBe('s3cret');
    expect(presentedAdminKey(basic('admin', 's3:cret'))).toBe('s3:cret');
    expect(presentedAdminKey(basic('', 's3cret'))).toBe('s3cret');
  });

  it('presents nothing for a missing, empty or foreign credential', () => {
    expect(presentedAdminKey(undefined)).toBeNull();
    expect(presentedAdminKey('Bearer ')).toBeNull();
    expect(presentedAdminKey('Key s3cret')).toBeNull();
    expect(presentedAdminKey('s3cret')).toBeNull();
    expect(presentedAdminKey(basic('admin', ''))).toBeNull();
    expect(presentedAdminKey('Basic bm9jb2xvbg==')).toBeNull(); // "nocolon"
  });

  it('accepts only the configured key', () => {
    const digest = hashKey('s3cret');
    expect(isAdminKey('s3cret', digest)).toBe(true);
    expect(isAdminKey('s3cret ', digest)).toBe(false);
    expect(isAdminKey('', hashKey(''))).toBe(true);
    expect(isAdminKey(null, hashKey(''))).toBe(false);
  });
});
