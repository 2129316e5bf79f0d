import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { loadConfig } from '@conveyor/config';
import { MemoryExpiries, MemoryFiles } from '../../../../test/support/batch-fakes.js';
import { FileExpirySweeper } from './file-expiry-sweeper.service.js';

describe('FileExpirySweeper', () => {
  const now = () => Math.floor(Date.now() / 1000);
  let files: MemoryFiles;
  let expiries: MemoryExpiries;
  let sweeper: FileExpirySweeper;

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    files = new MemoryFiles();
    expiries = new MemoryExpiries();
    sweeper = new FileExpirySweeper(loadConfig({ MODEL: 'tiny' }), expiries, files);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('removes the files expired by now and forgets them, and leaves the rest', async () => {
    const [old, later] = [files.put('a'), files.put('b')];
    await expiries.expire([old], now() - 1);
    await expiries.expire([later], now() + 3600);
    expect(await sweeper.sweep()).toBe(1);
    await expect(files.get(old)).rejects.toThrow();
    expect(await files.get(later)).toMatchObject({ id: later });
    expect([...expiries.at.keys()]).toEqual([later]);
  });

  it('counts a file another replica removed first as removed', async () => {
    const gone = files.put('a');
    await expiries.expire([gone], now());
    await files.delete(gone);
    expect(await sweeper.sweep()).toBe(1);
    expect(expiries.at.size).toBe(0);
  });

  it('keeps a file it could not remove, to try again on the next pass', async () => {
    const kept = files.put('a');
    await expiries.expire([kept], now());
    files.delete = () => Promise.reject(new Error('store unreachable'));
    await expect(sweeper.sweep()).rejects.toThrow('store unreachable');
    expect([...expiries.at.keys()]).toEqual([kept]);
  });
});
