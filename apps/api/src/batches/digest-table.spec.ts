import { DigestTable } from './digest-table.js';

describe('DigestTable', () => {
  it('keeps the first value stored under each text, and tells texts apart', () => {
    const table = new DigestTable();
    expect(table.setIfAbsent('a', 1)).toBeUndefined();
    expect(table.setIfAbsent('b', 0)).toBeUndefined();
    expect(table.setIfAbsent('a', 7)).toBe(1);
    expect(table.setIfAbsent('a', 8)).toBe(1);
    expect(table.setIfAbsent('b', 9)).toBe(0);
    expect(table.size).toBe(2);
  });

  it('holds every entry across many doublings', () => {
    const table = new DigestTable();
    const n = 50_000;
    for (let i = 0; i < n; i++) expect(table.setIfAbsent(`id-${i}`, i)).toBeUndefined();
    expect(table.size).toBe(n);
    for (let i = 0; i < n; i += 991) expect(table.setIfAbsent(`id-${i}`, 0)).toBe(i);
    expect(table.size).toBe(n);
    expect(table.setIfAbsent(`id-${n}`, n)).toBeUndefined();
  });

  it('stores line numbers up to 2^32 − 2', () => {
    const table = new DigestTable();
    table.setIfAbsent('last', 2 ** 32 - 2);
    expect(table.setIfAbsent('last', 0)).toBe(2 ** 32 - 2);
  });
});
