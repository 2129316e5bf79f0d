import { describe, expect, it } from '@jest/globals';
import { loadScript } from '@conveyor/redis';
import { API_SCRIPTS } from './api-redis.js';

describe('API_SCRIPTS', () => {
  it('registers every script with as many keys as its callers pass, as its header says', () => {
    const keys = Object.fromEntries(API_SCRIPTS.map((s) => [s.name, loadScript(s).numberOfKeys]));
    expect(keys).toEqual({
      renewLease: 1,
      releaseLease: 1,
      referImage: 2,
      holdImage: 2,
      releaseImage: 2,
      commitBatchResults: 5,
      endBatch: 1,
      advanceResponse: 1,
      holdStoreIdentity: 1,
      releaseStoreIdentity: 1,
      countLineQueued: 1,
      pickWorkerRoute: 2,
      countUsage: 3,
      rollUpUsage: 1,
      reserveQueuePlace: 3,
      reserveTokens: 3,
      settleTokens: 5,
      reserveBatchTokens: 2,
      settleBatchTokens: 3,
      createApiKey: 4,
      updateApiKey: 2,
      rotateApiKey: 3,
      revokeApiKey: 3,
      grantBatchLines: 1,
    });
  });
});
