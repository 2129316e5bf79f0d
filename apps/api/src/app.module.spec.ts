import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@conveyor/config';
import { uninjectableParameters } from '../../../test/support/injectable-params.js';
import { AppModule } from './app.module.js';

describe('AppModule', () => {
  it('can inject every constructor parameter of its providers (no port imported as a type only)', () => {
    expect(uninjectableParameters(AppModule.forConfig(loadConfig({})))).toEqual([]);
  });
});
