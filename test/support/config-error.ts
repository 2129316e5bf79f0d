import { expect } from '@jest/globals';
import { ConfigError } from '../../libs/config/src/config-error.js';
import { loadConfig } from '../../libs/config/src/load-config.js';

/** The ConfigError a bad environment must raise; fails the test when none is thrown. */
export function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}
