import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { TokenUsage } from '@conveyor/queue';
import { JobQueue } from '../generation/job-queue.port.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Prometheus metrics of this API replica. Queue depths, live workers and
 * batch lines are read from Redis when scraped, so every replica reports the
 * same platform-wide values for them.
 */
@Injectable()
export class PlatformMetrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'conveyor_http_requests_total',
    help: 'HTTP requests answered, by route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly queueWait = new Histogram({
    name: 'conveyor_queue_wait_seconds',
    help: 'Time from enqueueing a chat request to a worker starting it',
    labelNames: ['deployment'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new Histogram({
    name: 'conveyor_time_to_first_token_seconds',
    help: 'Time from accepting a chat request to its first generated text reaching the API',
    labelNames: ['deployment'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly promptTokens = new Counter({
    name: 'conveyor_prompt_tokens_total',
    help: 'Prompt tokens of finished requests and batch lines: computed by the worker, or reused from its prompt cache',
    labelNames: ['deployment', 'source'] as const,
    registers: [this.registry],
  });

  readonly prefixRoutes = new Counter({
    name: 'conveyor_prefix_routes_total',
    help:
      'Requests whose prompt is long enough to route by: hit (sent to the worker holding its beginning), ' +
      'miss (no live worker holds it), saturated (the workers holding it had no free sequence)',
    labelNames: ['deployment', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Counts a finished reply's prompt: what its worker computed and what it reused. */
  countPrompt(deployment: string, usage: TokenUsage): void {
    const cached = usage.cachedTokens ?? 0;
    this.promptTokens.inc({ deployment, source: 'computed' }, usage.promptTokens - cached);
    this.promptTokens.inc({ deployment, source: 'cached' }, cached);
  }

  readonly tokens = new Counter({
    name: 'conveyor_generated_tokens_total',
    help: 'Completion tokens generated for interactive requests',
    labelNames: ['deployment'] as const,
    registers: [this.registry],
  });

  readonly tokensPerSecond = new Histogram({
    name: 'conveyor_generation_tokens_per_second',
    help: 'Completion tokens per second of each interactive reply, from its first to its last event',
    labelNames: ['deployment'] as const,
    buckets: [1, 5, 10, 25, 50, 100, 200, 400, 800, 1600],
    registers: [this.registry],
  });

  constructor(
    registry: DeploymentRegistry,
    queue: JobQueue,
    workers: LiveWorkers,
    // Only what the batch-lines gauge reads, so the metrics can be built over fakes of the repositories.
    @Inject(BatchRecords) batches: Pick<BatchRecords, 'active' | 'get'>,
  ) {
    const deployments = () => registry.all.map((d) => d.id);
    collectDefaultMetrics({ register: this.registry, prefix: 'conveyor_api_' });
    new Gauge({
      name: 'conveyor_queue_depth',
      help: 'Jobs per deployment queue: interactive waiting, batch lines waiting, running',
      labelNames: ['deployment', 'kind'] as const,
      registers: [this.registry],
      async collect() {
        for (const d of deployments()) {
          const c = await queue.counts(d);
          this.set({ deployment: d, kind: 'interactive' }, c.waiting);
          this.set({ deployment: d, kind: 'batch' }, c.prioritized);
          this.set({ deployment: d, kind: 'running' }, c.active);
        }
      },
    });
    new Gauge({
      name: 'conveyor_live_workers',
      help: 'Workers announcing themselves for each deployment',
      labelNames: ['deployment'] as const,
      registers: [this.registry],
      async collect() {
        for (const [d, n] of await workers.counts(deployments())) this.set({ deployment: d }, n);
      },
    });
    new Gauge({
      name: 'conveyor_batch_lines',
      help: 'Lines of batches still running, by state',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const totals = { completed: 0, failed: 0, pending: 0 };
        for (const id of await batches.active()) {
          const b = await batches.get(id);
          if (!b) continue;
          totals.completed += b.completed;
          totals.failed += b.failed;
          totals.pending += Math.max(0, b.total - b.completed - b.failed);
        }
        for (const [state, n] of Object.entries(totals)) this.set({ state }, n);
      },
    });
  }
}
