import {
  applyDecorators,
  Controller,
  createParamDecorator,
  Injectable,
  type ExecutionContext,
  type PipeTransform,
} from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { DeploymentConfig } from '@conveyor/config';
import { UseAuthScheme, type AuthScheme } from '../auth/auth-scheme.decorator.js';
import type { SurfaceRoute } from '../contracts/surface-route.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';

interface AppPath {
  org: string;
  app: string;
}

/**
 * The serverless app-host form: routes under `/<org_id>/<app_id>/v1`, a key as `Authorization: Key <key>`.
 * `also`: the prefixes a family takes besides `Key` (see `UseAuthScheme`).
 */
export const HostedAppController = (...also: AuthScheme[]) =>
  applyDecorators(
    Controller(':org/:app/v1'),
    UseAuthScheme('Key', ...also),
    ApiParam({ name: 'org', description: 'Organisation', type: String }),
    ApiParam({ name: 'app', description: 'App', type: String }),
  );

/** A surface's route under a hosted app's `/<org_id>/<app_id>/v1`: its own route, declared once with its dialect. */
export const hostedPath = (surface: SurfaceRoute): string => surface.route.replace(/^\/v1\//, '');

/** Resolves the path's org and app to their deployment, or the app's 404 before the route runs. */
@Injectable()
export class HostedAppPipe implements PipeTransform<AppPath, DeploymentConfig> {
  constructor(private readonly registry: DeploymentRegistry) {}

  transform({ org, app }: AppPath): DeploymentConfig {
    return this.registry.requireApp(org, app);
  }
}

const AppPathParams = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AppPath =>
    ctx.switchToHttp().getRequest<FastifyRequest<{ Params: AppPath }>>().params,
);

/** The deployment the path's org and app name: the only one a hosted route serves (another `model` is a 404). */
export const HostedApp = () => AppPathParams(HostedAppPipe);
