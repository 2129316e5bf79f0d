import { Controller, Get, Param } from '@nestjs/common';
import type { Model, ModelList } from '@conveyor/openai';
import { DeploymentRegistry } from './deployment-registry.service.js';

@Controller('v1/models')
export class ModelsController {
  constructor(private readonly registry: DeploymentRegistry) {}

  @Get()
  list(): ModelList {
    return this.registry.list();
  }

  // Model ids may contain '/', so the route takes the rest of the path.
  @Get('*')
  get(@Param('*') name: string): Model {
    this.registry.require(name);
    return this.registry.list().data.find((m) => m.id === name) as Model;
  }
}
