import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { DrainService } from '../platform/drain.service.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { ModelLoads } from '../repositories/model-loads.port.js';

interface Readiness {
  status: 'ready' | 'not_ready' | 'draining';
  /** `on_demand`: loaded by a worker when its requests wait, so none need hold it for the API to be ready. */
  deployments: Record<string, { live_workers: number; on_demand?: true; loading?: true }>;
}

@Controller()
export class HealthController {
  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly workers: LiveWorkers,
    private readonly drain: DrainService,
    private readonly loads: ModelLoads,
  ) {}

  /** Liveness: answers as soon as the process serves HTTP. */
  @Get('health')
  @ApiOperation({ summary: 'Liveness' })
  @ApiResponse({ status: 200, description: '{status: "ok"}' })
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: 503 until every pinned deployment has at least one live worker (on-demand ones load when
   * asked), and from the moment the API starts draining.
   */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: every deployment has a live worker, and the API is not shutting down' })
  @ApiResponse({ status: 200, description: 'ready' })
  @ApiResponse({ status: 503, description: 'not_ready or draining' })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<Readiness> {
    if (this.drain.draining) {
      reply.status(503);
      return { status: 'draining', deployments: {} };
    }
    const counts = await this.workers
      .counts(this.registry.all.map((d) => d.id))
      .catch(() => new Map(this.registry.all.map((d) => [d.id, 0])));
    const onDemand = new Set(this.registry.all.filter((d) => d.load === 'on-demand').map((d) => d.id));
    const loading = await this.loads.loading([...onDemand]).catch(() => new Set<string>());
    const deployments = Object.fromEntries(
      [...counts].map(([id, n]) => [
        id,
        {
          live_workers: n,
          ...(onDemand.has(id) ? { on_demand: true as const } : {}),
          ...(loading.has(id) ? { loading: true as const } : {}),
        },
      ]),
    );
    // An on-demand model waits for its first request to be loaded: requiring a worker for it would keep
    // the API out of its Service, and so the request that would load it from ever arriving.
    const ready = [...counts].every(([id, n]) => n > 0 || onDemand.has(id));
    reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', deployments };
  }
}
