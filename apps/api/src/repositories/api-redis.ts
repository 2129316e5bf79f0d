import { Logger } from '@nestjs/common';
import type { PlatformConfig } from '@conveyor/config';
import { IMAGE_SCRIPTS } from '@conveyor/queue';
import { CommandConnection, LEASE_SCRIPTS, type LuaScript } from '@conveyor/redis';

const script = (name: string, file: string): LuaScript => ({
  name,
  file: new URL(`./scripts/${file}`, import.meta.url),
});

/**
 * Every script the API's repositories call, defined once on its command connection under the name each
 * repository calls it by.
 */
export const API_SCRIPTS: readonly LuaScript[] = [
  ...LEASE_SCRIPTS,
  ...Object.values(IMAGE_SCRIPTS),
  script('commitBatchResults', 'commit-batch-results.lua'),
  script('endBatch', 'end-batch.lua'),
  script('advanceResponse', 'advance-response.lua'),
  script('holdStoreIdentity', 'hold-store-identity.lua'),
  script('releaseStoreIdentity', 'release-store-identity.lua'),
  script('countLineQueued', 'count-line-queued.lua'),
  script('pickWorkerRoute', 'pick-worker-route.lua'),
  script('countUsage', 'count-usage.lua'),
  script('rollUpUsage', 'roll-up-usage.lua'),
  script('reserveQueuePlace', 'reserve-queue-place.lua'),
  script('reserveTokens', 'reserve-tokens.lua'),
  script('settleTokens', 'settle-tokens.lua'),
  script('reserveBatchTokens', 'reserve-batch-tokens.lua'),
  script('settleBatchTokens', 'settle-batch-tokens.lua'),
  script('createApiKey', 'create-api-key.lua'),
  script('updateApiKey', 'update-api-key.lua'),
  script('rotateApiKey', 'rotate-api-key.lua'),
  script('revokeApiKey', 'revoke-api-key.lua'),
  script('grantBatchLines', 'grant-batch-lines.lua'),
];

/**
 * The API's one command connection, shared by its repositories and adapters (the reply relay's blocking
 * readers keep their own). A command fails at once while Redis is away (no offline
 * queue), so a request gets an error it can report.
 */
export function apiRedis(config: PlatformConfig): CommandConnection {
  return CommandConnection.open(config.redis, {
    name: 'conveyor-api',
    role: 'command',
    scripts: API_SCRIPTS,
    logger: new Logger('ApiRedis'),
  });
}
