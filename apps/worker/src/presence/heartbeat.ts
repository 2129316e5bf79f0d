import { liveWorkersKey, workerBeatsClockKey, workerBeatsKey } from '@conveyor/queue';
import type { RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';

/** Beats a worker may miss before it counts as gone: its announcement and its heartbeat lapse then. */
export const LAPSE_BEATS = 3;

/**
 * One process's heartbeat for a deployment, scored in Redis's clock: whoever reads it compares it with
 * the same clock, so clock skew between machines cannot make a live worker look dead.
 *
 * It also keeps the heartbeats' clock (KEYS[2], see workerBeatsClockKey): when any process last beat,
 * and since when beats have landed with no gap longer than half a lapse. A longer gap means nobody
 * could beat (their Redis was down or failing over), so every beat is old for a reason other than death.
 */
const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lapse = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lapse, ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[2], 'last'))
if not last or now - last > lapse / 2 then redis.call('HSET', KEYS[2], 'since', now) end
redis.call('HSET', KEYS[2], 'last', now)
redis.call('PEXPIRE', KEYS[2], lapse * 10)
return now
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    beatInstance(beats: string, clock: string, instance: string, lapseMs: number): Result<number, Context>;
  }
}

export interface HeartbeatSettings {
  prefix: string;
  /** `host:pid`: the worker as routing and readiness count it. */
  workerId: string;
  /** This process alone (see WorkerIdentity.instance): the worker as takeover tells it apart. */
  instance: string;
  deployments: readonly string[];
  heartbeatMs: number;
}

/**
 * A worker's beats, for each deployment it serves: its announcement (`liveWorkersKey`, for routing and
 * readiness) and its heartbeat (`workerBeatsKey`, for taking over its jobs should it die). Both lapse
 * after LAPSE_BEATS missed beats. A shutdown withdraws the announcement at once and the heartbeat only
 * once the jobs in hand are finished or handed back, so no other worker takes over a job still running.
 */
export class Heartbeat {
  private announced = true;

  constructor(
    private readonly redis: RedisClient,
    private readonly settings: HeartbeatSettings,
  ) {
    redis.defineCommand('beatInstance', { numberOfKeys: 2, lua: BEAT });
  }

  get lapseMs(): number {
    return this.settings.heartbeatMs * LAPSE_BEATS;
  }

  async beat(): Promise<void> {
    const { prefix, workerId, instance, deployments } = this.settings;
    const now = Date.now();
    // One pipeline per deployment: on a cluster, different deployments' keys sit in different slots.
    await Promise.all(
      deployments.map((d) => {
        const pipeline = this.redis.pipeline();
        if (this.announced) {
          const key = liveWorkersKey(prefix, d);
          pipeline.zadd(key, now + this.lapseMs, workerId).zremrangebyscore(key, '-inf', now);
        }
        pipeline.beatInstance(workerBeatsKey(prefix, d), workerBeatsClockKey(prefix, d), instance, this.lapseMs);
        return execAll(pipeline);
      }),
    );
  }

  /** Stops announcing the worker for new jobs; the heartbeat goes on. */
  async withdraw(): Promise<void> {
    this.announced = false;
    await Promise.all(
      this.settings.deployments.map((d) =>
        this.redis.zrem(liveWorkersKey(this.settings.prefix, d), this.settings.workerId),
      ),
    );
  }

  /** The worker holds no job any more: its heartbeat goes, and nobody need look for its jobs. */
  async leave(): Promise<void> {
    await Promise.all(
      this.settings.deployments.map((d) =>
        this.redis.zrem(workerBeatsKey(this.settings.prefix, d), this.settings.instance),
      ),
    );
  }
}

/** Runs a pipeline and fails with its first error: a pipeline's exec resolves even when commands fail. */
async function execAll(pipeline: ReturnType<RedisClient['pipeline']>): Promise<void> {
  for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
}
