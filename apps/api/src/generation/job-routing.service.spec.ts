import { beforeEach, describe, expect, it } from '@jest/globals';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { MIN_ROUTED_BLOCKS, type GenerationJobData, type QueuedJobData } from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { WorkerRoutes, type RoutePick } from '../repositories/worker-routes.port.js';
import { JobQueue } from '../contracts/job-queue.port.js';
import { JobRouting } from './job-routing.service.js';

/** Answers with a set pick (or fails), and records what it was asked. */
class ScriptedRoutes extends WorkerRoutes {
  answer: RoutePick | Error = { outcome: 'miss' };
  readonly asked: { deployment: string; blocks: number; minBlocks: number }[] = [];

  async pick(deployment: string, blocks: readonly string[], minBlocks: number): Promise<RoutePick> {
    this.asked.push({ deployment, blocks: blocks.length, minBlocks });
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

class NoWorkers extends LiveWorkers {
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, 0]));
  }
  async count(): Promise<number> {
    return 0;
  }
}

const LONG = 'Classify the ticket by its topic and answer in one word. '.repeat(40);

const chatJob = (content: string, deployment = 'alpha'): GenerationJobData => ({
  requestId: '00000000-0000-4000-8000-000000000001',
  deployment,
  messages: [{ role: 'user', content }],
  sampling: { temperature: 0 },
  stop: [],
  enqueuedAt: 0,
});

describe('JobRouting', () => {
  let config: PlatformConfig;
  let routes: ScriptedRoutes;
  let metrics: PlatformMetrics;
  let routing: JobRouting;

  beforeEach(() => {
    const base = loadConfig({});
    config = {
      ...base,
      deployments: [
        { ...base.deployments[0]!, id: 'alpha' },
        { ...base.deployments[0]!, id: 'beta', promptCache: 'off' },
      ],
    };
    const registry = new DeploymentRegistry(config);
    routes = new ScriptedRoutes();
    metrics = new PlatformMetrics(registry, {} as JobQueue, new NoWorkers(), {
      active: async () => [],
      get: async () => null,
    });
    routing = new JobRouting(registry, routes, metrics);
  });

  const counted = async (outcome: string) =>
    (await metrics.prefixRoutes.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

  it('sends a job to the worker holding its prompt, and counts the hit', async () => {
    routes.answer = { outcome: 'hit', worker: 'host_1', blocks: 9 };
    expect(await routing.target(chatJob(LONG))).toBe('host_1');
    expect(routes.asked).toEqual([{ deployment: 'alpha', blocks: expect.any(Number), minBlocks: MIN_ROUTED_BLOCKS }]);
    expect(routes.asked[0]!.blocks).toBeGreaterThanOrEqual(MIN_ROUTED_BLOCKS);
    expect(await counted('hit')).toBe(1);
  });

  it('sends it to the deployment queue on a miss or when the holders are saturated, counting each', async () => {
    routes.answer = { outcome: 'miss' };
    expect(await routing.target(chatJob(LONG))).toBeNull();
    routes.answer = { outcome: 'saturated' };
    expect(await routing.target(chatJob(LONG))).toBeNull();
    expect([await counted('miss'), await counted('saturated')]).toEqual([1, 1]);
  });

  it('does not ask for a prompt too short to reuse, an embedding, or a deployment without the cache', async () => {
    routes.answer = { outcome: 'hit', worker: 'host_1', blocks: 9 };
    expect(await routing.target(chatJob('Hello there'))).toBeNull();
    expect(await routing.target(chatJob(LONG, 'beta'))).toBeNull();
    const embed: QueuedJobData = { requestId: 'r', deployment: 'alpha', inputs: [LONG], enqueuedAt: 0 };
    expect(await routing.target(embed)).toBeNull();
    expect(routes.asked).toEqual([]);
  });

  it('a routing failure sends the job to the deployment queue instead of failing the request', async () => {
    routes.answer = new Error('Connection is closed.');
    expect(await routing.target(chatJob(LONG))).toBeNull();
  });
});
