import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@conveyor/config';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { PendingWork, type DeploymentWork } from '../repositories/pending-work.port.js';
import { ScalingService } from './scaling.service.js';

const work = (n: number): DeploymentWork => ({
  waiting: n,
  batchQueued: 2 * n,
  routed: 0,
  running: 1,
  batchUnqueued: 100 * n,
  waitingByTier: { priority: 0, default: n, flex: 0, batch: 2 * n },
});

class FixedWork extends PendingWork {
  failing = false;
  async of(deployments: readonly string[]): Promise<Map<string, DeploymentWork>> {
    if (this.failing) throw new Error('Connection is closed.');
    return new Map(deployments.map((d) => [d, work(d === 'a' ? 1 : 2)]));
  }
}

const config = loadConfig({ MODEL: 'tiny', MODEL_ID: 'a' });
const registry = new DeploymentRegistry({
  ...config,
  deployments: [
    { ...config.deployments[0]!, id: 'a', pool: 'cpu' },
    { ...config.deployments[0]!, id: 'org/b', pool: 'cpu' },
  ],
});

describe('ScalingService', () => {
  const source = new FixedWork();
  const scaling = new ScalingService(registry, source);

  it("answers a deployment's work with its value, the sum of where it is", async () => {
    expect(await scaling.deployment('org/b')).toEqual({
      deployment: 'org/b',
      pool: 'cpu',
      value: 2 + 4 + 0 + 1 + 200,
      waiting: 2,
      batch_queued: 4,
      routed: 0,
      running: 1,
      batch_unqueued: 200,
    });
  });

  it("sums a pool's deployments, each also given apart, and answers 0 for a pool no deployment names", async () => {
    const cpu = await scaling.pool('cpu');
    expect(cpu).toMatchObject({ pool: 'cpu', value: 104 + 207, batch_unqueued: 300, running: 2 });
    expect(Object.keys(cpu.deployments)).toEqual(['a', 'org/b']);
    expect(cpu.deployments.a).toEqual({
      value: 104,
      waiting: 1,
      batch_queued: 2,
      routed: 0,
      running: 1,
      batch_unqueued: 100,
    });
    expect(await scaling.pool('gpu')).toEqual({
      pool: 'gpu',
      value: 0,
      waiting: 0,
      batch_queued: 0,
      routed: 0,
      running: 0,
      batch_unqueued: 0,
      deployments: {},
    });
  });

  it('answers 404 for a pool or deployment that does not exist, and 503 while the work cannot be read', async () => {
    await expect(scaling.pool('tpu')).rejects.toMatchObject({ status: 404, code: 'pool_not_found' });
    await expect(scaling.deployment('nope')).rejects.toMatchObject({ status: 404, code: 'deployment_not_found' });
    source.failing = true;
    await expect(scaling.pool('cpu')).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    source.failing = false;
  });
});
