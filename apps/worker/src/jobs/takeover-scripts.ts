import type { LuaScript } from '@conveyor/redis';
import type { Result } from 'ioredis';

/**
 * Which workers died, from their heartbeats: each script reads or writes one deployment's heartbeat keys.
 * Defined on the worker's command connection (WORKER_SCRIPTS), which the take-over is given; a file of
 * their own, since the connection's module importing the take-over's made an import cycle.
 */
export const TAKEOVER_SCRIPTS: readonly LuaScript[] = [
  { name: 'lapsedInstances', file: new URL('./scripts/lapsed-instances.lua', import.meta.url) },
  { name: 'forgetInstance', file: new URL('./scripts/forget-instance.lua', import.meta.url) },
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    lapsedInstances(beats: string, clock: string, lapseMs: number): Result<string[], Context>;
    forgetInstance(beats: string, instance: string): Result<number, Context>;
  }
}
