import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** The deployments this API routes to, from config; the API never loads a model itself. */
@Injectable()
export class DeploymentRegistry {
  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  get all(): readonly DeploymentConfig[] {
    return this.config.deployments;
  }

  /** The deployment a request's `model` names, or a 404 model_not_found. */
  require(model: string): DeploymentConfig {
    const found = this.config.deployments.find((d) => d.id === model);
    if (!found) throw OpenAiHttpError.modelNotFound(model);
    return found;
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
