import { Controller, Get, Param } from '@nestjs/common';
import type { Model, ModelList } from '@conveyor/openai';
import { ApiParam } from '@nestjs/swagger';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { ModelListService } from './model-list.service.js';

@Controller('v1/models')
@UseAuthScheme('Bearer')
export class ModelsController {
  constructor(private readonly models: ModelListService) {}

  @Get()
  @ApiRoute('Deployed models, with live-worker counts', { auth: 'Bearer', errors: [401, 429, 503] })
  @ApiJsonOk('A list of models')
  list(): Promise<ModelList> {
    return this.models.list();
  }

  // Model ids may contain '/', so the route takes the rest of the path.
  @Get('*')
  @ApiRoute('One deployed model', { auth: 'Bearer', errors: [401, 404, 503] })
  @ApiParam({ name: 'model', type: String, description: 'Model id (may contain /)' })
  @ApiJsonOk('A model')
  get(@Param('*') name: string): Promise<Model> {
    return this.models.get(name);
  }
}
