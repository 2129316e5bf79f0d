import { describe, expect, it } from '@jest/globals';
import { loadScript } from '@conveyor/redis';
import { HEARTBEAT_SCRIPTS, WORKER_SCRIPTS } from './worker-redis.js';

describe("the worker's scripts", () => {
  it('registers every script with as many keys as its callers pass, as its header says', () => {
    const keys = Object.fromEntries(
      [...WORKER_SCRIPTS, ...HEARTBEAT_SCRIPTS].map((s) => [s.name, loadScript(s).numberOfKeys]),
    );
    expect(keys).toEqual({
      releaseImage: 2,
      lapsedInstances: 2,
      forgetInstance: 1,
      bullTakeOverJobs: 8,
      renewLease: 1,
      releaseLease: 1,
      beatInstance: 2,
    });
  });
});
