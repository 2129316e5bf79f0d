import { liveWorkersKey, workerBeatsClockKey, workerBeatsKey } from '@conveyor/queue';
import { defineScripts, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { HEARTBEAT_SCRIPTS } from '../worker-redis.js';

/** Beats a worker may miss before it counts as gone: its announcement and its heartbeat lapse then. */
export const LAPSE_BEATS = 3;

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
  /** The deployments it holds a model of: on-demand ones come and go (Heartbeat.serve). */
  deployments: readonly string[];
  heartbeatMs: number;
}

/**
 * A worker's beats, for each deployment it serves: its announcement (`liveWorkersKey`, for routing and
 * readiness) and its heartbeat (`workerBeatsKey`, for taking over its jobs should it die). Both lapse
 * after LAPSE_BEATS missed beats. A shutdown withdraws the announcement at once and the heartbeat only
 * once the jobs in hand are finished or handed back, so no other worker takes over a job still running.
 * Each beat is scored in Redis's clock (scripts/beat-instance.lua).
 *
 * Not a lease (see Leases in @conveyor/redis): nothing is held by one process against the others. Every
 * live process adds itself to a deployment's set, and whoever reads the set counts the members whose
 * beat has not lapsed; a lapse is judged against the beats' own clock, not by a key's TTL.
 */
export class Heartbeat {
  private announced = true;
  private readonly settings: HeartbeatSettings;

  /** `redis`: the heartbeat's own connection (its thread's), on which its script is defined. */
  constructor(
    private readonly redis: RedisClient,
    settings: HeartbeatSettings,
  ) {
    this.settings = { ...settings };
    defineScripts(redis, HEARTBEAT_SCRIPTS);
  }

  /**
   * Beats for `deployments` from now on, at once for those added; those left out (a model unloaded, with
   * no job of it in hand) lose both the announcement and the heartbeat, as after a graceful shutdown.
   */
  async serve(deployments: readonly string[]): Promise<void> {
    const { prefix, instance, workerId } = this.settings;
    const gone = this.settings.deployments.filter((d) => !deployments.includes(d));
    this.settings.deployments = [...deployments];
    await Promise.all(
      gone.map((d) =>
        Promise.all([
          this.redis.zrem(liveWorkersKey(prefix, d), workerId),
          this.redis.zrem(workerBeatsKey(prefix, d), instance),
        ]),
      ),
    );
    await this.beat();
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
