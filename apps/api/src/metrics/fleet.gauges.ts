import { Injectable } from '@nestjs/common';
import {
  POOL_WORKERS,
  QUEUE_JOBS,
  REDIS_COMMANDS,
  SEQUENCES,
  VLLM_REQUESTS_RUNNING,
  VLLM_REQUESTS_WAITING,
  counterFrom,
  gaugeOf,
} from '@conveyor/metrics';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { JobQueue } from '../contracts/job-queue.port.js';
import { FleetState } from '../repositories/fleet-state.port.js';
import { PendingWork } from '../repositories/pending-work.port.js';
import { RedisServerStats } from '../repositories/redis-server-stats.port.js';
import { PlatformMetrics } from './platform-metrics.service.js';

/**
 * The fleet's gauges, read from Redis when scraped, so every replica reports the same values: requests
 * running and waiting under vLLM's names, BullMQ's job counts by state, each pool's live workers, each
 * deployment's sequences, busy or free, and the commands Redis has processed.
 */
@Injectable()
export class FleetGauges {
  constructor(
    metrics: PlatformMetrics,
    registry: DeploymentRegistry,
    queue: JobQueue,
    work: PendingWork,
    fleet: FleetState,
    redis: RedisServerStats,
  ) {
    const r = metrics.registry;
    // Redis's own count, so the dashboard divides it by tokens generated: the platform's cost in Redis
    // commands per 1,000 tokens, whoever sent them (API, workers, BullMQ).
    counterFrom(REDIS_COMMANDS, r, () => redis.commandsProcessed());
    gaugeOf(VLLM_REQUESTS_RUNNING, r, async (running) => {
      for (const [model_name, w] of await work.of(registry.all.map((d) => d.id)))
        running.set({ model_name }, w.running);
    });
    gaugeOf(VLLM_REQUESTS_WAITING, r, async (waiting) => {
      for (const [model_name, w] of await work.of(registry.all.map((d) => d.id)))
        waiting.set({ model_name }, w.waiting + w.batchQueued + w.routed);
    });
    gaugeOf(QUEUE_JOBS, r, async (jobs) => {
      for (const d of registry.all) {
        for (const [state, n] of Object.entries(await queue.countsByState(d.id)))
          jobs.set({ deployment: d.id, state }, n);
      }
    });
    gaugeOf(POOL_WORKERS, r, async (pools) => {
      const members = new Map<string, Set<string>>();
      for (const d of registry.all) {
        const seen = members.get(d.pool) ?? new Set<string>();
        for (const id of (await fleet.of(d.id)).workers) seen.add(id);
        members.set(d.pool, seen);
      }
      for (const [pool, seen] of members) pools.set({ pool }, seen.size);
    });
    gaugeOf(SEQUENCES, r, async (sequences) => {
      for (const d of registry.all) {
        const f = await fleet.of(d.id);
        // Workers that have not announced yet count as free: they take jobs as soon as they do.
        const free = f.free + (f.workers.length - f.announced) * d.parallel;
        const total = f.workers.length * d.parallel;
        sequences.set({ pool: d.pool, deployment: d.id, state: 'free' }, Math.min(free, total));
        sequences.set({ pool: d.pool, deployment: d.id, state: 'busy' }, Math.max(0, total - free));
      }
    });
  }
}
