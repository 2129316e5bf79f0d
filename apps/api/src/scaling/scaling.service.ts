import { Injectable } from '@nestjs/common';
import type { DeploymentConfig, Pool } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { PendingWork, type DeploymentWork } from '../repositories/pending-work.port.js';
import type { DeploymentSignal, PoolSignal, WorkBreakdown } from './scaling-signal.js';

/** The worker pools a deployment can name (the deployments file's `pool`). */
const POOLS: readonly Pool[] = ['cpu', 'gpu'];

const EMPTY: WorkBreakdown = { value: 0, waiting: 0, batch_queued: 0, routed: 0, running: 0, batch_unqueued: 0 };

function breakdown(w: DeploymentWork): WorkBreakdown {
  const parts = {
    waiting: w.waiting,
    batch_queued: w.batchQueued,
    routed: w.routed,
    running: w.running,
    batch_unqueued: w.batchUnqueued,
  };
  return { value: Object.values(parts).reduce((a, b) => a + b, 0), ...parts };
}

function sum(a: WorkBreakdown, b: WorkBreakdown): WorkBreakdown {
  return {
    value: a.value + b.value,
    waiting: a.waiting + b.waiting,
    batch_queued: a.batch_queued + b.batch_queued,
    routed: a.routed + b.routed,
    running: a.running + b.running,
    batch_unqueued: a.batch_unqueued + b.batch_unqueued,
  };
}

/**
 * The pending-work signal autoscaling reads: for a deployment, or summed over a worker pool, every job
 * and batch line its workers have not finished: waiting in its queue or a per-worker one, running, or
 * still in a running batch's input file. Running jobs count, so a pool busy with an empty queue is not
 * scaled below the workers running them.
 */
@Injectable()
export class ScalingService {
  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly work: PendingWork,
  ) {}

  /** One deployment's signal, or a 404 for a deployment not configured here. */
  async deployment(id: string): Promise<DeploymentSignal> {
    const deployment = this.registry.all.find((d) => d.id === id);
    if (!deployment) {
      throw new OpenAiHttpError(404, 'not_found_error', `No deployment "${id}".`, null, ErrorCode.deploymentNotFound);
    }
    const [signal] = await this.signals([deployment]);
    return signal!;
  }

  /** A pool's signal: its deployments' summed (0 for a pool no deployment names), or a 404 for no such pool. */
  async pool(name: string): Promise<PoolSignal> {
    const pool = POOLS.find((p) => p === name);
    if (!pool) {
      throw new OpenAiHttpError(
        404,
        'not_found_error',
        `No worker pool "${name}": pools are ${POOLS.join(', ')}.`,
        null,
        ErrorCode.poolNotFound,
      );
    }
    const signals = await this.signals(this.registry.all.filter((d) => d.pool === pool));
    const deployments: Record<string, WorkBreakdown> = {};
    let total = EMPTY;
    for (const { deployment, pool: _, ...work } of signals) {
      deployments[deployment] = work;
      total = sum(total, work);
    }
    return { pool, ...total, deployments };
  }

  /** Every deployment's signal. */
  all(): Promise<DeploymentSignal[]> {
    return this.signals(this.registry.all);
  }

  private async signals(deployments: readonly DeploymentConfig[]): Promise<DeploymentSignal[]> {
    if (!deployments.length) return [];
    const work = await this.work.of(deployments.map((d) => d.id)).catch((err: Error) => {
      throw OpenAiHttpError.unavailable(`The pending work could not be read: ${err.message}`);
    });
    return deployments.map((d) => ({ deployment: d.id, pool: d.pool, ...breakdown(work.get(d.id)!) }));
  }
}
