import { Injectable } from '@nestjs/common';
import { PENDING_WORK, gaugeOf } from '@conveyor/metrics';
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
    gaugeOf(PENDING_WORK, metrics.registry, async (gauge) => {
      for (const s of await scaling.all()) gauge.set({ pool: s.pool, deployment: s.deployment }, s.value);
    });
  }
}
