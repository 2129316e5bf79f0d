import { DigestTable } from './digest-table.js';

describe('DigestTable', () => {
  it('keeps the first value stored under each text, and tells texts apart', () => {
    const table = new DigestTable();
    expect(table.setIfAbsent('a', 1)).toBeUndefined();
    expect(table.setIfAbsent('b', 0)).toBeUndefined();
    expect(table.setIfAbsent('a', 7)).toBe(1);
    expect(table.get('a')).toBe(1);
    expect(table.get('b')).toBe(0);
    expect(table.get('c')).toBeUndefined();
    expect(table.size).toBe(2);
  });

  it('holds every entry across many doublings', () => {
    const table = new DigestTable();
    const n = 50_000;
    for (let i = 0; i < n; i++) expect(table.setIfAbsent(`id-${i}`, i)).toBeUndefined();
    expect(table.size).toBe(n);
    for (let i = 0; i < n; i += 997) expect(table.get(`id-${i}`)).toBe(i);
    for (let i = 0; i < n; i += 991) expect(table.setIfAbsent(`id-${i}`, 0)).toBe(i);
    expect(table.get(`id-${n}`)).toBeUndefined();
    expect(table.size).toBe(n);
  });

  it('stores line numbers up to 2^32 − 2', () => {
    const table = new DigestTable();
    table.setIfAbsent('last', 2 ** 32 - 2);
    expect(table.get('last')).toBe(2 ** 32 - 2);
  });
});
