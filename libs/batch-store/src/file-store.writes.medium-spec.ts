// Writes of the FileStore contract, run against the local and the S3 store alike: uploads up to
// their limit, and parts added and replaced while the file is read.
import { describe, expect, it } from '@jest/globals';
import {
  MiB,
  fileStoreSubjects,
  newOwner,
  generated,
  once,
  text,
  useSubject,
} from '../../../test/support/file-store-subjects.js';
import { FileTooLargeError } from './file-store.errors.js';

describe.each(fileStoreSubjects())('FileStore contract: %s', (_name, make) => {
  const subject = useSubject(make);

  it('refuses an upload past the limit and keeps nothing of it', async () => {
    const who = newOwner();
    const before = await subject.held();
    await expect(
      subject.store.save({ filename: 'x', purpose: 'batch', owner: who }, generated(7 * MiB).chunks, 6 * MiB),
    ).rejects.toThrow(FileTooLargeError);
    await expect(
      subject.store.save({ filename: 'y', purpose: 'batch', owner: who }, once('12345678901'), 10),
    ).rejects.toThrow(FileTooLargeError);
    expect(await subject.store.list(who)).toEqual([]);
    expect(await subject.held()).toEqual(before);
    // Exactly the limit is allowed.
    const fits = await subject.store.save({ filename: 'z', purpose: 'batch', owner: who }, once('1234567890'), 10);
    expect(fits.bytes).toBe(10);
  });

  it('reads a created file as its parts so far, in index order, while parts are still being added', async () => {
    const file = await subject.store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    expect(file.bytes).toBe(0);
    expect(await text(await subject.store.read(file.id))).toBe('');

    await subject.store.writePart(file.id, 0, 'a\n');
    const early = await subject.store.read(file.id);
    await subject.store.writePart(file.id, 2, 'c\n');
    expect(await text(early)).toBe('a\n');
    expect(await text(await subject.store.read(file.id))).toBe('a\nc\n');

    await subject.store.writePart(file.id, 1, 'b\n');
    // Indexes past six digits still sort as numbers.
    await subject.store.writePart(file.id, 1_700_000_000_000, 'e\n');
    await subject.store.writePart(file.id, 10, 'd\n');
    expect(await text(await subject.store.read(file.id))).toBe('a\nb\nc\nd\ne\n');
    expect((await subject.store.get(file.id)).bytes).toBe(10);
    expect(await text(await subject.sameStore().read(file.id))).toBe('a\nb\nc\nd\ne\n');
  });

  it('replaces a part that is written again, keeping no trace of the first write', async () => {
    const file = await subject.store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'alice' });
    await subject.store.writePart(file.id, 0, 'first\n');
    await subject.store.writePart(file.id, 1, 'second, first try, a long line\n');
    await subject.store.writePart(file.id, 1, 'second\n');
    await subject.store.writePart(file.id, 0, 'first\n');
    expect(await text(await subject.store.read(file.id))).toBe('first\nsecond\n');
    expect((await subject.store.get(file.id)).bytes).toBe(13);
  });
});
