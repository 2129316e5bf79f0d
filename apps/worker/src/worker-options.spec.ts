import { describe, expect, it } from '@jest/globals';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { selectDeployments } from './worker-options.js';

const deployment = (id: string, pool: 'cpu' | 'gpu') => ({ ...loadConfig({ MODEL_ID: id }).deployments[0]!, pool });
const config: PlatformConfig = {
  ...loadConfig({}),
  deployments: [deployment('a', 'cpu'), deployment('b', 'gpu'), deployment('c', 'cpu')],
};
const ids = (argv: string[], env: Record<string, string> = {}) => selectDeployments(config, argv, env).map((d) => d.id);

describe('selectDeployments', () => {
  it('serves the cpu pool unless a flag or WORKER_POOL names another, the flag first', () => {
    expect(ids([])).toEqual(['a', 'c']);
    expect(ids([], { WORKER_POOL: 'gpu' })).toEqual(['b']);
    expect(ids(['--pool', 'cpu'], { WORKER_POOL: 'gpu' })).toEqual(['a', 'c']);
    expect(ids(['--pool=gpu'])).toEqual(['b']);
    // Blank is unset, as for every variable.
    expect(ids([], { WORKER_POOL: ' ' })).toEqual(['a', 'c']);
  });

  it('serves exactly the deployments --deployments or WORKER_DEPLOYMENTS names, whatever their pool', () => {
    expect(ids(['--deployments', 'b,c'])).toEqual(['b', 'c']);
    expect(ids([], { WORKER_DEPLOYMENTS: ' c , b ', WORKER_POOL: 'cpu' })).toEqual(['b', 'c']);
    expect(ids(['--deployments=a'], { WORKER_DEPLOYMENTS: 'b' })).toEqual(['a']);
  });

  it('refuses an unknown deployment, an unknown pool, and a pool with nothing in it', () => {
    expect(() => ids([], { WORKER_DEPLOYMENTS: 'a,x' })).toThrow('Unknown deployment(s) x; configured: a, b, c');
    expect(() => ids([], { WORKER_POOL: 'tpu' })).toThrow('--pool must be cpu or gpu (got "tpu")');
    expect(() => ids(['--pool', 'tpu'])).toThrow('--pool must be cpu or gpu (got "tpu")');
    const cpuOnly = { ...config, deployments: [deployment('a', 'cpu')] };
    expect(() => selectDeployments(cpuOnly, ['--pool', 'gpu'], {})).toThrow('No deployment is in the gpu pool');
  });
});
