import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { Model, ModelList } from '@conveyor/openai';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';

/** The model list, with each deployment's live-worker count as an extra field. */
@Injectable()
export class ModelListService {
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly workers: LiveWorkers,
  ) {}

  async list(deployments: readonly DeploymentConfig[] = this.registry.all): Promise<ModelList> {
    const counts = await this.workers.counts(deployments.map((d) => d.id));
    const data: Model[] = deployments.map((d) => {
      const live = counts.get(d.id) ?? 0;
      return { id: d.id, object: 'model', created: this.created, owned_by: 'conveyor', status: live > 0 ? 'ready' : 'no_workers', live_workers: live };
    });
    return { object: 'list', data };
  }

  async get(id: string): Promise<Model> {
    const [model] = (await this.list([this.registry.require(id)])).data;
    return model;
  }
}
