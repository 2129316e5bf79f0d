// Identities and ids in the FileStore contract, run against the local and the S3 store alike: one
// identity per set of files, and ids the store could not have issued refused before any I/O.
import { describe, expect, it } from '@jest/globals';
import { fileStoreSubjects, once, text, useSubject } from '../../../test/support/file-store-subjects.js';
import { InvalidFileIdError } from './file-store.errors.js';

describe.each(fileStoreSubjects())('FileStore contract: %s', (_name, make) => {
  const subject = useSubject(make);

  it('has one identity for every instance on the same files, and another for other files', async () => {
    const identity = await subject.store.identity();
    expect(identity).toMatch(/^\S{8,}$/);
    expect(await subject.store.identity()).toBe(identity);
    expect(await subject.sameStore().identity()).toBe(identity);
    const [a, b] = [subject.otherStore(), subject.otherStore()];
    // Two processes opening a new store at once agree on its identity.
    const [first, second] = await Promise.all([a.identity(), b.identity()]);
    expect(first).toBe(second);
    expect(first).not.toBe(identity);
  });

  it('keeps a mark for every instance on the same files, and none on other files', async () => {
    expect(await subject.store.marked('keys-in-use')).toBe(false);
    await subject.store.mark('keys-in-use');
    await subject.store.mark('keys-in-use');
    expect(await subject.store.marked('keys-in-use')).toBe(true);
    expect(await subject.sameStore().marked('keys-in-use')).toBe(true);
    expect(await subject.otherStore().marked('keys-in-use')).toBe(false);
    await expect(subject.store.mark('../x')).rejects.toThrow(/Not a mark name/);
  });

  it('refuses ids it could not have issued, and bad part numbers, before any I/O', async () => {
    // A file the store would find if it built a path or key from '../<id>'.
    const decoy = await subject.store.save({ filename: 'd', purpose: 'batch', owner: 'alice' }, once('decoy'), 100);
    subject.sent();
    for (const id of [
      `../${decoy.id}`,
      `${decoy.id}/../${decoy.id}`,
      'file-a/b',
      '',
      'file-AAAAAAAAAAAAAAAAAAAAAAAA/..',
    ]) {
      await expect(subject.store.get(id)).rejects.toThrow(InvalidFileIdError);
      await expect(subject.store.getOwned(id, 'alice')).rejects.toThrow(InvalidFileIdError);
      await expect(subject.store.read(id)).rejects.toThrow(InvalidFileIdError);
      await expect(subject.store.read(id, { start: 0, end: 1 })).rejects.toThrow(InvalidFileIdError);
      await expect(subject.store.writePart(id, 0, 'x')).rejects.toThrow(InvalidFileIdError);
      await expect(subject.store.delete(id)).rejects.toThrow(InvalidFileIdError);
    }
    for (const index of [-1, 1.5, Number.NaN]) {
      await expect(subject.store.writePart(decoy.id, index, 'x')).rejects.toThrow(RangeError);
    }
    expect(subject.sent() ?? []).toEqual([]);
    expect(await text(await subject.store.read(decoy.id))).toBe('decoy');
  });
});
