import { Controller, Get, Param } from '@nestjs/common';
import type { Model, ModelList } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ModelListService } from './model-list.service.js';

@Controller('v1/models')
@UseAuthScheme('Bearer')
export class ModelsController {
  constructor(private readonly models: ModelListService) {}

  @Get()
  list(): Promise<ModelList> {
    return this.models.list();
  }

  // Model ids may contain '/', so the route takes the rest of the path.
  @Get('*')
  get(@Param('*') name: string): Promise<Model> {
    return this.models.get(name);
  }
}
