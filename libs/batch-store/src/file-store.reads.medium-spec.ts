// Reads of the FileStore contract, run against the local and the S3 store alike: whole streams
// and byte ranges, within a part and across parts.
import { describe, expect, it } from '@jest/globals';
import {
  MiB,
  digest,
  fileStoreSubjects,
  generated,
  text,
  useSubject,
} from '../../../test/support/file-store-subjects.js';

describe.each(fileStoreSubjects())('FileStore contract: %s', (name, make) => {
  const subject = useSubject(make);

  it('streams a multi-megabyte upload in and back out unchanged, and ranges of it', async () => {
    const size = 12 * MiB + 12_345;
    const content = generated(size);
    subject.sent();
    const saved = await subject.store.save(
      { filename: 'big.jsonl', purpose: 'batch', owner: 'alice' },
      content.chunks,
      20 * MiB,
    );
    // Past S3's 5 MiB part size the upload goes multipart.
    if (name === 'S3FileStore') expect(subject.sent()).toContain('UploadPartCommand');
    expect(saved).toMatchObject({ filename: 'big.jsonl', purpose: 'batch', owner: 'alice', bytes: size });
    expect(saved.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(await subject.store.get(saved.id)).toEqual(saved);
    expect(await digest(await subject.store.read(saved.id))).toEqual({ sha256: content.sha256(), bytes: size });

    const whole = content.whole();
    const at = 5 * MiB - 10;
    expect(await text(await subject.store.read(saved.id, { start: at, end: at + 19 }))).toBe(
      whole.subarray(at, at + 20).toString(),
    );
    expect(await text(await subject.store.read(saved.id, { start: size - 5 }))).toBe(
      whole.subarray(size - 5).toString(),
    );
  });

  it('reads byte ranges within one part and across parts', async () => {
    const file = await subject.store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    for (const [index, part] of ['abcdef', 'ghij', '', 'klmnop'].entries())
      await subject.store.writePart(file.id, index, part);
    const range = async (start: number, end?: number) => text(await subject.store.read(file.id, { start, end }));
    expect(await range(1, 3)).toBe('bcd');
    expect(await range(0, 0)).toBe('a');
    expect(await range(6, 9)).toBe('ghij');
    expect(await range(4, 11)).toBe('efghijkl');
    expect(await range(12)).toBe('mnop');
    expect(await range(0)).toBe('abcdefghijklmnop');
    expect(await range(15, 100)).toBe('p');
    expect(await range(16)).toBe('');
    await expect(subject.store.read(file.id, { start: -1 })).rejects.toThrow(RangeError);
    await expect(subject.store.read(file.id, { start: 5, end: 4 })).rejects.toThrow(RangeError);
  });
});
