import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from '../../../test/support/file-store-subjects.js';
import { LocalFileStore } from './local-file.store.js';

const scratch = mkdtempSync(join(tmpdir(), 'conveyor-local-file-store-'));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('LocalFileStore on disk', () => {
  it('leaves no temporary file behind, and takes nothing but numbered parts for content', async () => {
    const dir = join(scratch, 'temporaries');
    const store = new LocalFileStore(dir);
    const file = await store.create({ filename: 'out', purpose: 'batch_output', owner: 'alice' });
    // Writes of the same parts at once: each part ends as one whole write, never a mix.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.writePart(file.id, i % 4, `${i % 10}\n`.repeat(1000))),
    );
    expect(readdirSync(join(dir, file.id)).sort()).toEqual(['meta.json', 'parts']);
    expect(readdirSync(join(dir, file.id, 'parts')).sort()).toEqual(['000000', '000001', '000002', '000003']);
    const lines = (await text(await store.read(file.id))).split('\n').filter(Boolean);
    for (let part = 0; part < 4; part++) expect(new Set(lines.slice(part * 1000, part * 1000 + 1000)).size).toBe(1);

    writeFileSync(join(dir, file.id, 'parts', 'notes.txt'), 'x');
    expect((await store.get(file.id)).bytes).toBe(8000);
  });
});
