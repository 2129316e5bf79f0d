import { Controller, Get, UseGuards } from '@nestjs/common';
import type { AdminFleet } from '@conveyor/openai';
import { AdminKeyGuard } from '../admin/admin-key.guard.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { FleetService } from './fleet.service.js';

/** The fleet's detail behind the admin key: what the console's fleet view and an operator read. */
@Controller('v1/admin/fleet')
@UseGuards(AdminKeyGuard)
export class FleetController {
  constructor(private readonly fleet: FleetService) {}

  @Get()
  @ApiRoute("Each deployment's workers, their sequences busy and free, and its work waiting by band (admin key)", {
    auth: 'Bearer',
    errors: [401, 404],
  })
  @ApiJsonOk(
    '`{object: "list", data: [{object: "fleet.deployment", id, pool, load, status, sequences: {total, busy}, workers: [{id, sequences, free}], waiting: {priority, default, flex, batch}, routed, running, batch_unqueued}]}`',
  )
  view(): Promise<AdminFleet> {
    return this.fleet.view();
  }
}
