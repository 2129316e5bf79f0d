import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { Model, ModelList } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** The deployments this API routes to, from config; the API never loads a model itself. */
@Injectable()
export class DeploymentRegistry {
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  /** The deployment a request's `model` names, or a 404 model_not_found. */
  require(model: string): DeploymentConfig {
    const found = this.config.deployments.find((d) => d.id === model);
    if (!found) throw OpenAiHttpError.modelNotFound(model);
    return found;
  }

  list(): ModelList {
    const data: Model[] = this.config.deployments.map((d) => ({
      id: d.id,
      object: 'model',
      created: this.created,
      owned_by: 'conveyor',
    }));
    return { object: 'list', data };
  }
}
