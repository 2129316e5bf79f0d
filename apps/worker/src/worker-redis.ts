import { Logger } from '@nestjs/common';
import type { PlatformConfig } from '@conveyor/config';
import { IMAGE_SCRIPTS } from '@conveyor/queue';
import { TAKE_OVER_SCRIPT } from '@conveyor/bullmq-seam';
import { CommandConnection, LEASE_SCRIPTS, type LuaScript } from '@conveyor/redis';
import { TAKEOVER_SCRIPTS } from './jobs/takeover-scripts.js';

/**
 * Every script the worker calls on its command connection, defined once there under the name each caller
 * calls it by: releasing a job's images, finding and forgetting dead workers (jobs/scripts/), and taking
 * their jobs back from BullMQ (the seam's script).
 */
export const WORKER_SCRIPTS: readonly LuaScript[] = [
  IMAGE_SCRIPTS.release,
  ...TAKEOVER_SCRIPTS,
  TAKE_OVER_SCRIPT,
  // An on-demand model's one load in the fleet is a lease (jobs/redis-model-demand.ts).
  ...LEASE_SCRIPTS,
];

/** The heartbeat thread's script, on that thread's own connection (see presence/heartbeat.thread.ts). */
export const HEARTBEAT_SCRIPTS: readonly LuaScript[] = [
  { name: 'beatInstance', file: new URL('./presence/scripts/beat-instance.lua', import.meta.url) },
];

/**
 * The worker's one command connection, shared by its adapters: reply events, batch results, image reads
 * and releases, cancel checks, routing announcements, and the queues jobs are sent on through. Its
 * writes are held while Redis is away and sent once it is back (`background`). Auto-pipelining sends
 * what a turn of the event loop wrote in one round trip, in order: the reply outbox relies on it (a
 * flush's entries, then the records of the replies that ended). Kept apart: BullMQ's workers, whose
 * blocking fetches hold their connections; the cancel subscription; and the heartbeat, beaten from a
 * thread of its own.
 */
export function workerRedis(config: PlatformConfig): CommandConnection {
  return CommandConnection.open(config.redis, {
    name: 'conveyor-worker',
    role: 'background',
    scripts: WORKER_SCRIPTS,
    logger: new Logger('WorkerRedis'),
    extra: { enableAutoPipelining: true },
  });
}
