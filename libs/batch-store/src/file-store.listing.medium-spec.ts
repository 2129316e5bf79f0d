// Which files the FileStore contract shows, run against the local and the S3 store alike: an
// owner's list, another owner's file, a deleted file.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { fileStoreSubjects, once, type Subject } from '../../../test/support/file-store-subjects.js';
import { FileNotFoundError } from './file-store.errors.js';
import type { FileStore } from './file-store.js';

describe.each(fileStoreSubjects())('FileStore contract: %s', (_name, make) => {
  let subject: Subject;
  let store: FileStore;
  const owner = () => `owner-${randomBytes(4).toString('hex')}`;

  beforeAll(() => {
    subject = make();
    store = subject.store;
  });

  it("lists an owner's files newest first, with their sizes, and no one else's", async () => {
    const [alice, bob] = [owner(), owner()];
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      ids.push((await store.save({ filename: `f${i}`, purpose: 'batch', owner: alice }, once('x'.repeat(i)), 100)).id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const output = await store.create({ filename: 'out', purpose: 'batch_output', owner: alice });
    await store.writePart(output.id, 0, 'four');
    const bobs = await store.save({ filename: 'b', purpose: 'batch', owner: bob }, once('b'), 100);

    const list = await subject.sameStore().list(alice);
    expect(list.map((f) => f.id)).toEqual([output.id, ...ids.reverse()]);
    expect(list.map((f) => f.bytes)).toEqual([4, 3, 2, 1]);
    expect(list[0]).toMatchObject({ filename: 'out', purpose: 'batch_output', owner: alice });
    expect((await store.list(bob)).map((f) => f.id)).toEqual([bobs.id]);
    expect(await store.list(owner())).toEqual([]);
  });

  it("hides another owner's file exactly like a missing one", async () => {
    const file = await store.save({ filename: 'a', purpose: 'batch', owner: 'alice' }, once('secret'), 100);
    expect(await store.getOwned(file.id, 'alice')).toEqual(file);
    await expect(store.getOwned(file.id, 'bob')).rejects.toThrow(FileNotFoundError);
    await expect(store.getOwned('file-000000000000000000000000', 'alice')).rejects.toThrow(FileNotFoundError);
  });

  it('deletes a file with all its parts; after that it is not found', async () => {
    const file = await store.create({ filename: 'out', purpose: 'batch_output', owner: 'alice' });
    await store.writePart(file.id, 0, 'a');
    await store.writePart(file.id, 1, 'b');
    await store.delete(file.id);
    await expect(store.get(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(store.read(file.id)).rejects.toThrow(FileNotFoundError);
    await expect(store.writePart(file.id, 2, 'c')).rejects.toThrow(FileNotFoundError);
    await expect(store.delete(file.id)).rejects.toThrow(FileNotFoundError);
    expect((await store.list('alice')).map((f) => f.id)).not.toContain(file.id);
    expect((await subject.held()).filter((k) => k.includes(file.id))).toEqual([]);
  });
});
