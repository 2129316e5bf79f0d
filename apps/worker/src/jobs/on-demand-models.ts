import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { estimateModelMemoryMb, modelLoads, modelMemoryHeld } from '@conveyor/engine';
import { WorkerHost } from './worker-host.js';
import { WORKER_IDENTITY, type WorkerIdentity } from '../presence/worker-identity.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { ModelDemand } from './model-demand.port.js';
import { SERVED_DEPLOYMENTS } from '../engine/served-deployments.token.js';

/** How long a load is claimed before its loader must renew the claim: a loader that dies frees it this soon. */
const LOAD_CLAIM_MS = 15_000;
/** After a load failed here, how long this worker leaves the deployment alone (its waiting jobs were failed). */
const FAILED_LOAD_BACKOFF_MS = 30_000;
/**
 * How long work must wait for a served deployment, at the least, before its workers count as busy: a
 * worker that has just loaded it takes a moment to start on its queue, and a copy then would be wasted.
 */
const BUSY_AFTER_MS = 2000;

/**
 * Loads the on-demand deployments of this worker's pool where they are wanted, within the worker's memory
 * budget (WORKER_MEMORY_BUDGET_MB): every MODEL_DEMAND_POLL_MS it looks for a deployment whose queue
 * has work and that no live worker serves, claims its one load in the fleet (so a cold model loads on
 * one worker, not on every one), makes room by unloading the least recently used idle on-demand model,
 * loads it and starts taking its jobs. A deployment whose workers are all busy (work waiting at every look
 * for BUSY_AFTER_MS, and at two looks at least, while served) gets another copy here, one load at a time in the fleet, but only into room this
 * worker has free: an idle model is never unloaded for a second copy, so a long batch on one model cannot
 * push every other model out of the fleet. A load that fails fails the waiting jobs with the reason, rather
 * than leaving them to time out. Pinned deployments were loaded before the worker started and count
 * against the budget; they are never unloaded.
 */
@Injectable()
export class OnDemandModels implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OnDemandModels.name);
  private readonly candidates: DeploymentConfig[];
  /** On-demand deployments loaded here, with the MiB each takes. */
  private readonly held = new Map<string, number>();
  private readonly estimates = new Map<string, number>();
  private readonly failedUntil = new Map<string, number>();
  /** Deployments already reported as never fitting this worker's budget. */
  private readonly tooLarge = new Set<string>();
  /** Deployments served elsewhere whose queue has had work waiting at every look since then (ms since the epoch). */
  private readonly waitingSince = new Map<string, number>();
  private pinnedMb = 0;
  private timer: NodeJS.Timeout | null = null;
  private looking: Promise<void> | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    @Inject(SERVED_DEPLOYMENTS) private readonly deployments: DeploymentConfig[],
    @Inject(WORKER_IDENTITY) private readonly identity: WorkerIdentity,
    private readonly engines: EngineRegistry,
    private readonly host: WorkerHost,
    private readonly demand: ModelDemand,
  ) {
    this.candidates = deployments.filter((d) => d.load === 'on-demand');
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.candidates.length) return;
    for (const d of this.deployments) {
      if (d.load === 'on-demand') continue;
      const mb = await this.estimate(d);
      this.pinnedMb += mb;
      modelMemoryHeld.set({ deployment: d.id }, mb);
    }
    this.logger.log(
      `Memory budget ${this.config.worker.memoryBudgetMb} MiB, ${this.pinnedMb} MiB of it pinned; ` +
        `loading on demand: ${this.candidates.map((d) => `"${d.id}"`).join(', ')}`,
    );
    this.timer = setInterval(() => {
      if (this.looking) return;
      this.looking = this.look()
        .catch((err: Error) => this.logger.warn(`Looking for models to load failed: ${err.message}`))
        .finally(() => (this.looking = null));
    }, this.config.worker.demandPollMs);
  }

  /** Loads nothing more; a load under way ends first (the engines are freed with the registry afterwards). */
  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.looking;
  }

  /**
   * One look at every on-demand deployment not held here: one kept warm by fewer workers than it asks
   * for, or with work waiting and no worker, is loaded (making room); one whose workers are all busy gets
   * a copy where room is free.
   */
  private async look(): Promise<void> {
    for (const d of this.candidates) {
      if (!this.timer) return;
      if (this.held.has(d.id) || (this.failedUntil.get(d.id) ?? 0) > Date.now()) {
        this.waitingSince.delete(d.id);
        continue;
      }
      const live = await this.demand.liveWorkers(d.id);
      if (live < d.minWarm) {
        await this.load(d, 'make room');
        continue;
      }
      const waiting = (await this.demand.waiting(d.id)) > 0;
      // Only work waiting while a worker serves the deployment says its workers are busy: a cold model's
      // first requests wait for its load.
      const since = this.waitingSince.get(d.id);
      const busy = since !== undefined && Date.now() - since >= this.busyAfterMs();
      if (waiting && live > 0) this.waitingSince.set(d.id, since ?? Date.now());
      else this.waitingSince.delete(d.id);
      if (live === 0 && waiting) await this.load(d, 'make room');
      else if (live > 0 && waiting && busy) await this.load(d, 'free room only');
    }
  }

  private async load(d: DeploymentConfig, room: 'make room' | 'free room only'): Promise<void> {
    let need: number;
    try {
      need = await this.estimate(d);
    } catch (err) {
      // Its file cannot be found or read: no worker will load it.
      return this.failed(d, (err as Error).message);
    }
    const budget = this.config.worker.memoryBudgetMb;
    // A copy beside busy workers only goes where it fits now: other workers may have the room.
    if (room === 'free room only' && this.usedMb() + need > budget) return;
    if (this.pinnedMb + need > budget) {
      if (!this.tooLarge.has(d.id))
        this.logger.warn(
          `"${d.id}" needs ${need} MiB: more than this worker's budget of ${budget} MiB leaves beside its pinned models (${this.pinnedMb} MiB); another worker must load it`,
        );
      this.tooLarge.add(d.id);
      return;
    }
    const me = this.identity.id;
    if (!(await this.demand.claimLoad(d.id, me, LOAD_CLAIM_MS))) return;
    const renewal = setInterval(
      () => void this.demand.renewLoad(d.id, me, LOAD_CLAIM_MS).catch(() => undefined),
      LOAD_CLAIM_MS / 3,
    );
    try {
      if (!(await this.makeRoom(need))) return;
      const started = Date.now();
      try {
        await this.engines.add(d);
      } catch (err) {
        await this.failed(d, (err as Error).message);
        return;
      }
      await this.host.hold(d);
      this.held.set(d.id, need);
      modelLoads.inc({ deployment: d.id, event: 'loaded' });
      modelMemoryHeld.set({ deployment: d.id }, need);
      this.waitingSince.delete(d.id);
      this.logger.log(
        `Loaded "${d.id}" on demand in ${Date.now() - started} ms (${need} MiB; ${this.usedMb()} MiB held)` +
          (room === 'free room only' ? ', a copy beside busy workers' : ''),
      );
    } finally {
      clearInterval(renewal);
      await this.demand.endLoad(d.id, me).catch(() => undefined);
    }
  }

  /** Unloads idle on-demand models, least recently used first, until `need` MiB fit; false where they cannot now. */
  private async makeRoom(need: number): Promise<boolean> {
    const budget = this.config.worker.memoryBudgetMb;
    while (this.usedMb() + need > budget) {
      const idle: { id: string; since: number }[] = [];
      for (const id of this.held.keys()) {
        const since = this.host.idleSince(id);
        if (since === null) continue;
        // A model no more workers hold than it keeps warm stays.
        const warm = this.candidates.find((d) => d.id === id)?.minWarm ?? 0;
        if (warm && (await this.demand.liveWorkers(id)) <= warm) continue;
        idle.push({ id, since });
      }
      idle.sort((a, b) => a.since - b.since);
      const victim = idle[0];
      if (!victim) return false;
      await this.host.release(victim.id);
      await this.engines.remove(victim.id);
      this.held.delete(victim.id);
      modelLoads.inc({ deployment: victim.id, event: 'unloaded' });
      modelMemoryHeld.remove({ deployment: victim.id });
      this.logger.log(`Unloaded "${victim.id}", idle and least recently used, to make room`);
    }
    return true;
  }

  /** The model could not load: its waiting jobs are failed with the reason until the queue is empty. */
  private async failed(d: DeploymentConfig, reason: string): Promise<void> {
    const message = `The model of "${d.id}" could not be loaded: ${reason}`;
    this.logger.error(message);
    modelLoads.inc({ deployment: d.id, event: 'failed' });
    this.failedUntil.set(d.id, Date.now() + FAILED_LOAD_BACKOFF_MS);
    const stop = this.host.refuse(d.id, message);
    try {
      for (const until = Date.now() + FAILED_LOAD_BACKOFF_MS; Date.now() < until;) {
        await new Promise((r) => setTimeout(r, this.config.worker.demandPollMs));
        if (!(await this.demand.waiting(d.id))) break;
      }
    } finally {
      await stop();
    }
  }

  /** BUSY_AFTER_MS, and two looks at the least. */
  private busyAfterMs(): number {
    return Math.max(BUSY_AFTER_MS, 2 * this.config.worker.demandPollMs);
  }

  private usedMb(): number {
    let used = this.pinnedMb;
    for (const mb of this.held.values()) used += mb;
    return used;
  }

  private async estimate(d: DeploymentConfig): Promise<number> {
    let mb = this.estimates.get(d.id);
    if (mb === undefined) {
      mb = await estimateModelMemoryMb(d, this.config.modelsDir, this.logger);
      this.estimates.set(d.id, mb);
    }
    return mb;
  }
}
