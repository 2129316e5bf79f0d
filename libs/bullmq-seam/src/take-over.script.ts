import type { LuaScript, RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { bullJobKeyPrefix, bullQueueKey, type BullQueuePart } from './queue-keys.js';

/**
 * The script that moves a dead process's jobs back to waiting as BullMQ 6.7.0 would: scripts/take-over.lua
 * says how, and which keys and arguments it takes.
 */
export const TAKE_OVER_SCRIPT: LuaScript = {
  name: 'bullTakeOverJobs',
  file: new URL('./scripts/take-over.lua', import.meta.url),
};

/** The queue parts the script touches, in its KEYS order. */
const PARTS: readonly BullQueuePart[] = [
  'stalled',
  'wait',
  'active',
  'prioritized',
  'meta',
  'marker',
  'events',
  'repeat',
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    bullTakeOverJobs(
      ...keysThenArgs: (string | number)[]
    ): Result<[string, TakenBack['to'], number, number][], Context>;
  }
}

/** A job taken back from a dead process: where it waits now, its priority, and whether it fails when next taken. */
export interface TakenBack {
  id: string;
  to: 'wait' | 'prioritized';
  /** Its BullMQ priority (0: none). */
  priority: number;
  failing: boolean;
}

/**
 * Taking a dead process's jobs back from BullMQ's active list, on one connection, which has
 * TAKE_OVER_SCRIPT defined on it: a process's scripts are defined once, where it opens its connection.
 */
export class BullTakeOver {
  constructor(private readonly redis: RedisClient) {}

  /** The jobs of `queue` whose lock a token beginning with `tokenPrefix` holds, moved back to waiting. */
  async jobsOf(prefix: string, queue: string, tokenPrefix: string, maxStalledCount: number): Promise<TakenBack[]> {
    const keys = PARTS.map((part) => bullQueueKey(prefix, queue, part));
    const moved = await this.redis.bullTakeOverJobs(
      ...keys,
      maxStalledCount,
      bullJobKeyPrefix(prefix, queue),
      tokenPrefix,
    );
    return moved.map(([id, to, failing, priority]) => ({ id, to, priority, failing: failing === 1 }));
  }
}
