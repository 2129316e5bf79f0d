// Which files the FileStore contract shows, run against the local and the S3 store alike: an
// owner's list, another owner's file, a deleted file.
import { describe, expect, it } from '@jest/globals';
import { fileStoreSubjects, newOwner, once, useSubject } from '../../../test/support/file-store-subjects.js';
import { FileNotFoundError } from './file-store.errors.js';

describe.each(fileStoreSubjects())('FileStore contract: %s', (_name, make) => {
  const subject = useSubject(make);

  it("lists an owner's files newest first, with their sizes, and no one else's", async () => {
    const [alice, bob] = [newOwner(), newOwner()];
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      ids.push(
        (await subject.store.save({ filename: `f${i}`, purpose: 'batch', owner: alice }, once('x'.repeat(i)), 100)).id,
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    const output = await subject.store.create({ filename: 'out', purpose: 'batch_output', owner: alice });
    await subject.store.writePart(output.id, 0, 'four');
    const bobs = await subject.store.save({ filename: 'b', purpose: 'batch', owner: bob }, once('b'), 100);

    const list = await subject.sameStore().list(alice);
    expect(list.map((f) => f.id)).toEqual([output.id, ...ids.reverse()]);
    expect(list.map((f) => f.bytes)).toEqual([4, 3, 2, 1]);
    expect(list[0]).toMatchObject({ filename: 'out', purpose: 'batch_output', owner: alice });
    expect((await subject.store.list(bob)).map((f) => f.id)).toEqual([bobs.id]);
    expect(await subject.store.list(newOwner())).toEqual([]);
  });

  it("hides another owner's file exactly like a missing one", async () => {
    const file = await subject.store.save({ filename: 'a', purpose: 'batch', owner: 'alice' }, once('secret'), 100);
    expect(await subject.store.getOwned(file.id, 'alice')).toEqual(file);
    await expect(subject.store.getOwned(file.id, 'bob')).rejects.toThrow(FileNotFoundError);
    await expect(subject.store.getOwned('file-000000000000000000000000', 'alice')).rejects.toThrow(FileNotFoundError);
  });

  it('deletes a file with all its parts; after that it is not found', async () => {
    const file = await subject.store.create({ filename: 'out', purpose: 'batch_output', owner: 'alice' });
    await subject.store.writePart(file.id, 0, 'a');
    await subject.store.writePart(file.id, 1, 'b');
    await subject.store.delete(file.id);
    await expect(subject.store.get(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(subject.store.read(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(subject.store.writePart(file.id, 2, 'c')).rejects.toThrow(FileNotFoundError);
    await expect(subject.store.delete(file.id)).rejects.toThrow(FileNotFoundError);
    expect((await subject.store.list('alice')).map((f) => f.id)).not.toContain(file.id);
    expect((await subject.held()).filter((k) => k.includes(file.id))).toEqual([]);
  });
});
