import { Inject, Injectable } from '@nestjs/common';
import { ModelNames, PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** The deployments this API routes to, from config; the API never loads a model itself. */
@Injectable()
export class DeploymentRegistry {
  private readonly names: ModelNames;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    this.names = new ModelNames(config.deployments, config.modelNames);
  }

  get all(): readonly DeploymentConfig[] {
    return this.config.deployments;
  }

  /**
   * The deployment a request's `model` reaches: its id, or an alias of it (exact, a pattern, or the
   * default). Every route and batch line that takes a model name looks it up here.
   */
  find(model: string): DeploymentConfig | undefined {
    return this.names.resolve(model);
  }

  /** The deployment a request's `model` reaches, or a 404 model_not_found. */
  require(model: string): DeploymentConfig {
    const found = this.find(model);
    if (!found) throw OpenAiHttpError.modelNotFound(model);
    return found;
  }

  /** The exact aliases, listed as models of their own; patterns name no one model to list. */
  get aliases(): ReadonlyArray<{ name: string; deployment: DeploymentConfig }> {
    return this.names.listable();
  }

  /** The deployment served under `/<org>/<app>/v1`, if there is one. */
  findApp(org: string, app: string): DeploymentConfig | undefined {
    return this.config.deployments.find((d) => d.alias?.org === org && d.alias.app === app);
  }

  /** The deployment served under `/<org>/<app>/v1`, or a 404. */
  requireApp(org: string, app: string): DeploymentConfig {
    const found = this.findApp(org, app);
    if (!found)
      throw new OpenAiHttpError(
        404,
        'not_found_error',
        `No app "${app}" in organisation "${org}".`,
        null,
        ErrorCode.appNotFound,
      );
    return found;
  }
}
