import { Controller, Get, Param } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import type { DeploymentSignal, PoolSignal } from './scaling-signal.js';
import { ScalingService } from './scaling.service.js';

/**
 * The pending-work signal in the shape KEDA's metrics-api scaler reads (`valueLocation: value`). Public,
 * like /metrics, which carries the same numbers as `conveyor_pending_work`: the operator's autoscaler
 * calls it by the Service's name with no secret to manage; keep it on the internal network.
 */
@Controller('scaling')
export class ScalingController {
  constructor(private readonly scaling: ScalingService) {}

  @Get('pools/:pool')
  @ApiRoute("A worker pool's pending work: every job and batch line its deployments have not finished", {
    errors: [404, 503],
  })
  @ApiParam({ name: 'pool', enum: ['cpu', 'gpu'], description: 'The worker pool' })
  @ApiJsonOk('`{pool, value, waiting, batch_queued, routed, running, batch_unqueued, deployments}`')
  pool(@Param('pool') pool: string): Promise<PoolSignal> {
    return this.scaling.pool(pool);
  }

  // Deployment ids may contain '/', so the route takes the rest of the path.
  @Get('deployments/*')
  @ApiRoute("A deployment's pending work: every job and batch line its workers have not finished", {
    errors: [404, 503],
  })
  @ApiParam({ name: 'deployment', type: String, description: 'Deployment id (may contain /)' })
  @ApiJsonOk('`{deployment, pool, value, waiting, batch_queued, routed, running, batch_unqueued}`')
  deployment(@Param('*') id: string): Promise<DeploymentSignal> {
    return this.scaling.deployment(id);
  }
}
