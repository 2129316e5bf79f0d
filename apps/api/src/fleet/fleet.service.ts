import { Injectable } from '@nestjs/common';
import type { AdminFleet, FleetDeployment } from '@conveyor/openai';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { FleetState } from '../repositories/fleet-state.port.js';
import { ModelLoads } from '../repositories/model-loads.port.js';
import { PendingWork } from '../repositories/pending-work.port.js';

/** The fleet as the admin sees it: per deployment, its workers and their sequences, and its work by band. */
@Injectable()
export class FleetService {
  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly fleet: FleetState,
    private readonly work: PendingWork,
    private readonly loads: ModelLoads,
  ) {}

  async view(): Promise<AdminFleet> {
    const ids = this.registry.all.map((d) => d.id);
    const [work, loading] = await Promise.all([this.work.of(ids), this.loads.loading(ids)]);
    // Each deployment's keys are read apart (one slot on a cluster), side by side.
    const fleets = await Promise.all(ids.map((id) => this.fleet.of(id)));
    const data: FleetDeployment[] = [];
    for (const [i, d] of this.registry.all.entries()) {
      const fleet = fleets[i]!;
      const w = work.get(d.id)!;
      const live = fleet.workers.length;
      data.push({
        object: 'fleet.deployment',
        id: d.id,
        pool: d.pool,
        load: d.load,
        status: live ? 'ready' : loading.has(d.id) ? 'loading' : d.load === 'on-demand' ? 'cold' : 'no_workers',
        sequences: {
          total: live * d.parallel,
          // Busy is known only where every live worker has said how many of its sequences are free.
          busy: fleet.announced === live ? live * d.parallel - fleet.free : null,
        },
        workers: fleet.perWorker.map(({ id, free }) => ({ id, sequences: d.parallel, free })),
        waiting: w.waitingByTier,
        routed: w.routed,
        running: w.running,
        batch_unqueued: w.batchUnqueued,
      });
    }
    return { object: 'list', data };
  }
}
