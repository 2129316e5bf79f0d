import { MetadataConstraint } from './metadata.validator.js';

describe('MetadataConstraint', () => {
  const valid = (v: unknown) => new MetadataConstraint().validate(v);

  it("takes OpenAI's metadata: up to 16 pairs, keys up to 64 characters, string values up to 512", () => {
    expect(valid({ team: 'a', run: '7' })).toBe(true);
    expect(valid(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'])))).toBe(true);
    expect(valid({ ['k'.repeat(64)]: 'v'.repeat(512) })).toBe(true);
    expect(valid(null)).toBe(true);
  });

  it('refuses more pairs, longer keys or values, values that are not strings, and what is not an object', () => {
    expect(valid(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])))).toBe(false);
    expect(valid(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v'])))).toBe(false);
    expect(valid({ ['k'.repeat(65)]: 'v' })).toBe(false);
    expect(valid({ k: 'v'.repeat(1_000_000) })).toBe(false);
    expect(valid({ k: 1 })).toBe(false);
    expect(valid(['a'])).toBe(false);
    expect(valid('a')).toBe(false);
  });
});
