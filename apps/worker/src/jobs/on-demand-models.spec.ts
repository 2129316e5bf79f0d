import { afterEach, describe, expect, it } from '@jest/globals';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import type { EngineRegistry } from '../engine/engine-registry.js';
import type { WorkerIdentity } from '../presence/worker-identity.js';
import { ModelDemand } from './model-demand.port.js';
import { OnDemandModels } from './on-demand-models.js';
import type { WorkerHost } from './worker-host.js';

/** The fleet as one worker sees it: live workers and waiting jobs per deployment, one load at a time. */
class FakeDemand extends ModelDemand {
  readonly live = new Map<string, number>();
  readonly queued = new Map<string, number>();
  loading: string | null = null;

  waiting(deployment: string): Promise<number> {
    return Promise.resolve(this.queued.get(deployment) ?? 0);
  }
  liveWorkers(deployment: string): Promise<number> {
    return Promise.resolve(this.live.get(deployment) ?? 0);
  }
  claimLoad(_deployment: string, worker: string): Promise<boolean> {
    if (this.loading) return Promise.resolve(false);
    this.loading = worker;
    return Promise.resolve(true);
  }
  renewLoad(): Promise<void> {
    return Promise.resolve();
  }
  endLoad(): Promise<void> {
    this.loading = null;
    return Promise.resolve();
  }
}

const POLL_MS = 5;
const deployment = (id: string, memoryMb: number, minWarm = 0) =>
  ({ id, load: 'on-demand', memoryMb, minWarm }) as DeploymentConfig;

/** One worker with a budget of `budgetMb`, its engines and queue intake reduced to what they were asked. */
function worker(budgetMb: number, deployments: DeploymentConfig[]) {
  const demand = new FakeDemand();
  const loaded: string[] = [];
  const unloaded: string[] = [];
  const engines = {
    add: (d: DeploymentConfig) => Promise.resolve(void loaded.push(d.id)),
    remove: (id: string) => Promise.resolve(void unloaded.push(id)),
  } as unknown as EngineRegistry;
  // Every model it holds has been idle since the start: each may be unloaded to make room.
  const host = {
    hold: () => Promise.resolve(),
    release: () => Promise.resolve(),
    idleSince: () => 0,
  } as unknown as WorkerHost;
  const config = {
    worker: { memoryBudgetMb: budgetMb, demandPollMs: POLL_MS },
    modelsDir: '/models',
  } as PlatformConfig;
  const models = new OnDemandModels(config, deployments, { id: 'w1' } as WorkerIdentity, engines, host, demand);
  return { models, demand, loaded, unloaded };
}

const polls = (n: number) => new Promise((r) => setTimeout(r, POLL_MS * n));
/** Past the time work must wait before a model's workers count as busy (BUSY_AFTER_MS, 2 s). */
const pastBusy = () => new Promise((r) => setTimeout(r, 2500));
/** Waits for what a look should do, polling, so that a loaded machine only makes it slower. */
async function until(done: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !done(); await polls(1)) if (Date.now() > end) return;
}
let running: OnDemandModels | null = null;
afterEach(async () => {
  await running?.onApplicationShutdown();
  running = null;
});

describe('OnDemandModels', () => {
  it('loads a cold model with work waiting, making room by unloading an idle one', async () => {
    const w = worker(10, [deployment('a', 8), deployment('b', 8)]);
    running = w.models;
    w.demand.queued.set('a', 1);
    await w.models.onApplicationBootstrap();
    await until(() => w.loaded.length > 0);
    expect(w.loaded).toEqual(['a']);
    w.demand.queued.set('a', 0);
    w.demand.live.set('a', 1);
    w.demand.queued.set('b', 1);
    await until(() => w.loaded.length > 1);
    expect(w.loaded).toEqual(['a', 'b']);
    expect(w.unloaded).toEqual(['a']);
  });

  it('adds a copy of a model whose workers are all busy, once work has waited for BUSY_AFTER_MS, into free room', async () => {
    const w = worker(10, [deployment('a', 4)]);
    running = w.models;
    w.demand.live.set('a', 1);
    await w.models.onApplicationBootstrap();
    await polls(6);
    // Served elsewhere and nothing waits: left there.
    expect(w.loaded).toEqual([]);
    w.demand.queued.set('a', 3);
    await until(() => w.loaded.length > 0);
    expect(w.loaded).toEqual(['a']);
  });

  it('never unloads an idle model for a copy of a busy one', async () => {
    const w = worker(10, [deployment('idle', 8), deployment('busy', 4)]);
    running = w.models;
    w.demand.queued.set('idle', 1);
    await w.models.onApplicationBootstrap();
    await until(() => w.loaded.length > 0);
    expect(w.loaded).toEqual(['idle']);
    w.demand.queued.set('idle', 0);
    w.demand.live.set('idle', 1);
    // Another worker holds "busy" and cannot keep up.
    w.demand.live.set('busy', 1);
    w.demand.queued.set('busy', 5);
    await pastBusy();
    expect(w.loaded).toEqual(['idle']);
    expect(w.unloaded).toEqual([]);
  });

  it('loads nothing while another worker holds the one load of the model', async () => {
    const w = worker(10, [deployment('a', 4)]);
    running = w.models;
    w.demand.live.set('a', 1);
    w.demand.queued.set('a', 3);
    w.demand.loading = 'w2';
    await w.models.onApplicationBootstrap();
    await pastBusy();
    expect(w.loaded).toEqual([]);
  });
});
