import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ScalingService } from '../scaling/scaling.service.js';
import { PlatformMetrics } from './platform-metrics.service.js';

/**
 * `conveyor_pending_work{pool,deployment}`: the signal the scaling routes answer, per deployment, on
 * /metrics, so a Prometheus-driven autoscaler (or a dashboard) sees what KEDA's metrics-api scaler
 * sees. Read from Redis when scraped: every replica reports the same values.
 */
@Injectable()
export class PendingWorkGauge {
  constructor(metrics: PlatformMetrics, scaling: ScalingService) {
    new Gauge({
      name: 'conveyor_pending_work',
      help:
        'Jobs and batch lines a deployment has not finished: waiting (in its queue or a per-worker one), ' +
        'running, and lines of running batches not yet queued',
      labelNames: ['pool', 'deployment'] as const,
      registers: [metrics.registry],
      async collect() {
        for (const s of await scaling.all()) this.set({ pool: s.pool, deployment: s.deployment }, s.value);
      },
    });
  }
}
