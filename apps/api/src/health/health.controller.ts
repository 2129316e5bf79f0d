import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { DrainService } from '../platform/drain.service.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';

interface Readiness {
  status: 'ready' | 'not_ready' | 'draining';
  deployments: Record<string, { live_workers: number }>;
}

@Controller()
export class HealthController {
  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly workers: LiveWorkers,
    private readonly drain: DrainService,
  ) {}

  /** Liveness: answers as soon as the process serves HTTP. */
  @Get('health')
  @ApiOperation({ summary: 'Liveness' })
  @ApiResponse({ status: 200, description: '{status: "ok"}' })
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: 503 until every deployment has at least one live worker, and from the moment the API starts draining. */
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
    const deployments = Object.fromEntries([...counts].map(([id, n]) => [id, { live_workers: n }]));
    const ready = [...counts.values()].every((n) => n > 0);
    reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', deployments };
  }
}
