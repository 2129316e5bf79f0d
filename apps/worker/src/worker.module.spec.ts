import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@conveyor/config';
import { uninjectableParameters } from '../../../test/support/injectable-params.js';
import { WorkerModule } from './worker.module.js';

describe('WorkerModule', () => {
  it('can inject every constructor parameter of its providers (no port imported as a type only)', () => {
    const config = loadConfig({});
    expect(uninjectableParameters(WorkerModule.forDeployments(config, config.deployments))).toEqual([]);
  });
});
