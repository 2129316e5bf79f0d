import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { Model, ModelList } from '@conveyor/openai';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { ModelLoads } from '../repositories/model-loads.port.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** The model list, with each deployment's live-worker count as an extra field; exact aliases are listed after the deployments. */
@Injectable()
export class ModelListService {
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly registry: DeploymentRegistry,
    private readonly workers: LiveWorkers,
    private readonly loads: ModelLoads,
  ) {}

  async list(deployments: readonly DeploymentConfig[] = this.registry.all): Promise<ModelList> {
    // The counts come from the workers' heartbeats in Redis: while it is away the list is unavailable
    // (503, try again), as every route that needs Redis is, not a server error.
    const ids = deployments.map((d) => d.id);
    const onDemand = deployments.filter((d) => d.load === 'on-demand').map((d) => d.id);
    const [counts, loading] = await Promise.all([this.workers.counts(ids), this.loads.loading(onDemand)]).catch(
      (err: Error) => {
        throw OpenAiHttpError.unavailable(`The live workers could not be read: ${err.message}`);
      },
    );
    const status = (d: DeploymentConfig, live: number): Model['status'] => {
      if (live > 0) return 'ready';
      if (loading.has(d.id)) return 'loading';
      return d.load === 'on-demand' ? 'cold' : 'no_workers';
    };
    const entry = (id: string, d: DeploymentConfig): Model => {
      const live = counts.get(d.id) ?? 0;
      return {
        id,
        object: 'model',
        created: this.created,
        owned_by: 'conveyor',
        status: status(d, live),
        live_workers: live,
        ...(id === d.id ? {} : { alias_of: d.id }),
        ...(d.lora ? { parent: d.lora.base } : {}),
      };
    };
    const aliases = this.registry.aliases.filter((a) => deployments.includes(a.deployment));
    return {
      object: 'list',
      data: [...deployments.map((d) => entry(d.id, d)), ...aliases.map((a) => entry(a.name, a.deployment))],
    };
  }

  /** One model by the name a client sends, an alias's (or a pattern's) included: listed under that name. */
  async get(id: string): Promise<Model> {
    const deployment = this.registry.require(id);
    const [model] = (await this.list([deployment])).data;
    return id === deployment.id ? model : { ...model, id, alias_of: deployment.id };
  }
}
