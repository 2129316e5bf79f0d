import { describe, expect, it } from '@jest/globals';
import { deriveDeploymentId } from './deployment-id.js';
import { loadConfig } from '../load-config.js';
import { configError } from '../../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('lets MODEL_ID override the derived id', () => {
    const config = loadConfig({ MODEL: '/models/Model-Q8_0.gguf', MODEL_ID: 'my-org/chat' });
    expect(config.deployments[0]).toMatchObject({ id: 'my-org/chat', model: '/models/Model-Q8_0.gguf' });
  });

  it('derives the id from a GGUF path or an hf: URI', () => {
    expect(loadConfig({ MODEL: '/x/y/Model-Q8_0.gguf' }).deployments[0].id).toBe('Model-Q8_0');
    expect(loadConfig({ MODEL: 'hf:user/repo:Q4_K_M' }).deployments[0].id).toBe('repo');
  });

  it('refuses a MODEL that is neither a preset, a .gguf path nor an hf: URI', () => {
    const error = configError({ MODEL: 'gpt-4' });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^MODEL /);
    expect(error.problems[0]).toContain('"gpt-4"');
  });
});

describe('deriveDeploymentId', () => {
  it('names a preset by its model name', () => {
    expect(deriveDeploymentId('tiny')).toBe('conveyor-tiny');
    expect(deriveDeploymentId('bench')).toBe('conveyor-bench');
  });

  it('uses the file name of a GGUF path without its extension', () => {
    expect(deriveDeploymentId('/x/y/Model-Q8_0.gguf')).toBe('Model-Q8_0');
    expect(deriveDeploymentId('models/Other.GGUF')).toBe('Other');
  });

  it('uses the repository of an hf: URI with a quantization tag', () => {
    expect(deriveDeploymentId('hf:user/repo:Q4_K_M')).toBe('repo');
  });

  it('uses the file name of an hf: URI that names a file', () => {
    expect(deriveDeploymentId('hf:user/repo/file.gguf')).toBe('file');
  });
});
