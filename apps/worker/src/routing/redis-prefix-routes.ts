import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { routeBlocksKey, routeLoadKey, routeQueuesKey } from '@conveyor/queue';
import type { HeldPromptChange } from '@conveyor/engine';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { SERVED_DEPLOYMENTS } from '../engine/served-deployments.token.js';
import { WORKER_IDENTITY, type WorkerIdentity } from '../presence/worker-identity.js';
import { PrefixRoutes } from './prefix-routes.port.js';

/** One deployment's announcement: what each sequence holds, and which of its parts Redis lacks the latest of. */
interface Announcement {
  readonly sequences: Map<number, readonly string[]>;
  /** What the engine keeps beyond its sequences (in host memory), by entry: the chain its sequence had. */
  readonly apart: Map<number, readonly string[]>;
  free: number;
  /** The blocks last written (sorted, joined): a set unchanged by a reply is not written again. */
  written: string | null;
  blocksDirty: boolean;
  freeDirty: boolean;
}

/**
 * Announces in Redis what this worker's sequences hold (a set of block hashes per deployment, expiring
 * with the worker's heartbeat) and its free sequences. Changes within one event-loop turn are written
 * together, in one transaction, so the API never reads a set half rewritten.
 */
@Injectable()
export class RedisPrefixRoutes extends PrefixRoutes implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisPrefixRoutes.name);
  private readonly redis: RedisClient;
  private readonly announcements = new Map<string, Announcement>();
  private flushing = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  readonly worker: string;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(SERVED_DEPLOYMENTS) deployments: DeploymentConfig[],
    @Inject(WORKER_IDENTITY) identity: WorkerIdentity,
    { redis }: CommandConnection,
  ) {
    super();
    this.worker = identity.routeName;
    this.redis = redis;
    // On-demand models come and go, and are never routed to by prompt (see WorkerHost.serve).
    for (const d of deployments.filter((d) => d.load !== 'on-demand'))
      this.announcements.set(d.id, {
        sequences: new Map(),
        apart: new Map(),
        free: 0,
        written: null,
        blocksDirty: false,
        freeDirty: false,
      });
  }

  /** Registers this worker's queues (before it takes from them), and keeps the announcement alive. */
  async start(): Promise<void> {
    await Promise.all(
      [...this.announcements.keys()].map((d) =>
        this.redis.sadd(routeQueuesKey(this.config.redis.prefix, d), this.worker),
      ),
    );
    this.timer = setInterval(() => this.schedule(true), this.config.worker.heartbeatMs);
  }

  held(deployment: string, sequences: readonly number[], chains: readonly (readonly string[])[]): void {
    const announcement = this.announcements.get(deployment);
    if (!announcement) return;
    sequences.forEach((sequence, i) => announcement.sequences.set(sequence, chains[i] ?? []));
    announcement.blocksDirty = true;
    this.schedule();
  }

  heldApart(deployment: string, change: HeldPromptChange): void {
    const announcement = this.announcements.get(deployment);
    if (!announcement) return;
    if (change.kind === 'kept') {
      // Called as the engine saves the cells, before the request that cuts them ends: the sequence's
      // announced chain is what the cells held. (A reply that ended a moment before, and has not announced
      // its own chain yet, leaves the entry the one before: a stale hint, which routing can afford.)
      const chain = announcement.sequences.get(change.sequence);
      if (!chain?.length) return;
      announcement.apart.set(change.entry, chain);
    } else if (!announcement.apart.delete(change.entry)) return;
    announcement.blocksDirty = true;
    this.schedule();
  }

  free(deployment: string, count: number): void {
    const announcement = this.announcements.get(deployment);
    if (!announcement || announcement.free === count) return;
    announcement.free = count;
    announcement.freeDirty = true;
    this.schedule();
  }

  /** Writes what changed at the end of this turn; `all` rewrites everything (the heartbeat's refresh). */
  private schedule(all = false): void {
    if (this.closed) return;
    if (all)
      for (const a of this.announcements.values()) {
        a.written = null;
        a.blocksDirty = a.freeDirty = true;
      }
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      this.flush().catch((err: Error) => this.logger.warn(`Could not announce held prompts: ${err.message}`));
    });
  }

  /**
   * Per deployment that changed, what changed: its free sequences (one HSET, a job's start and end each
   * change it) and, only when they differ from those last written, its blocks, rewritten in one
   * transaction with the count, so the API never reads a set half rewritten. A reply whose sequence
   * holds what it held (or nothing, as with engines that keep no prompts) writes no set. The API reads
   * one deployment's keys at a time, in one slot on a cluster.
   */
  private async flush(): Promise<void> {
    const prefix = this.config.redis.prefix;
    const writes: Promise<unknown>[] = [];
    for (const [deployment, a] of this.announcements) {
      let blocks: Set<string> | null = null;
      if (a.blocksDirty) {
        a.blocksDirty = false;
        const held = new Set([...a.sequences.values(), ...a.apart.values()].flat());
        const written = [...held].sort().join(' ');
        if (written !== a.written) {
          a.written = written;
          blocks = held;
        }
      }
      if (!blocks && !a.freeDirty) continue;
      a.freeDirty = false;
      const load = routeLoadKey(prefix, deployment);
      if (!blocks) {
        writes.push(this.redis.hset(load, this.worker, a.free));
        continue;
      }
      const key = routeBlocksKey(prefix, deployment, this.worker);
      const multi = this.redis.multi().del(key);
      if (blocks.size) multi.sadd(key, ...blocks).pexpire(key, this.config.worker.heartbeatMs * 3);
      writes.push(multi.hset(load, this.worker, a.free).exec());
    }
    await Promise.all(writes);
  }

  /** Withdraws the announcement, so no request is routed here any more; the queue stays until it is drained. */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const prefix = this.config.redis.prefix;
    await Promise.all(
      [...this.announcements.keys()].map((d) =>
        this.redis
          .pipeline()
          .del(routeBlocksKey(prefix, d, this.worker))
          .hdel(routeLoadKey(prefix, d), this.worker)
          .exec(),
      ),
    ).catch(() => undefined);
  }
}
