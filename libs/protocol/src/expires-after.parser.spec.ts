import { describe, expect, it } from '@jest/globals';
import { parseExpiresAfter } from './expires-after.parser.js';

describe('parseExpiresAfter', () => {
  it('takes created_at and a whole number of seconds in range, as a number or as multipart text', () => {
    expect(parseExpiresAfter({ anchor: 'created_at', seconds: 3600 }, 'p', 3600)).toEqual({ ok: true, seconds: 3600 });
    expect(parseExpiresAfter({ anchor: 'created_at', seconds: '7200' }, 'p', 3600)).toEqual({
      ok: true,
      seconds: 7200,
    });
    expect(parseExpiresAfter({ anchor: 'created_at', seconds: 2 }, 'p', 1)).toEqual({ ok: true, seconds: 2 });
  });

  it.each([
    [null, 'p must be an object'],
    [[], 'p must be an object'],
    [{ anchor: 'last_active_at', seconds: 3600 }, 'p.anchor must be "created_at"'],
    [{ anchor: 'created_at', seconds: 3599 }, 'p.seconds must be a whole number of seconds from 3600 to 2592000'],
    [{ anchor: 'created_at', seconds: 2_592_001 }, 'p.seconds must be'],
    [{ anchor: 'created_at', seconds: 3600.5 }, 'p.seconds must be'],
    [{ anchor: 'created_at', seconds: '1e4' }, 'p.seconds must be'],
    [{ anchor: 'created_at' }, 'p.seconds must be'],
  ])('refuses %j', (value, message) => {
    const parsed = parseExpiresAfter(value, 'p', 3600);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(message);
  });
});
