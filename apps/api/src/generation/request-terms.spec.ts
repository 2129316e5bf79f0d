import { describe, expect, it } from '@jest/globals';
import type { ApiKeyConfig, DeploymentConfig } from '@conveyor/config';
import { servedTier, settledDeadline } from './request-terms.js';

const key = (settings: Partial<ApiKeyConfig> = {}): ApiKeyConfig => ({
  name: 'team',
  sha256: '0'.repeat(64),
  ...settings,
});
const deployment = (deadlineMs: number | null) => ({ deadlineMs }) as DeploymentConfig;

describe('servedTier', () => {
  it('serves the tier asked for where the key may use it; auto and nothing asked are default', () => {
    const all = key({ tiers: ['auto', 'default', 'flex', 'priority'] });
    expect(servedTier('priority', all)).toBe('priority');
    expect(servedTier('flex', all)).toBe('flex');
    expect(servedTier('auto', all)).toBe('default');
    expect(servedTier(undefined, all)).toBe('default');
    expect(servedTier(null, all)).toBe('default');
  });

  it('serves a tier the key may not use at default, as OpenAI does; a key naming none may use all but priority', () => {
    expect(servedTier('priority', key())).toBe('default');
    expect(servedTier('flex', key())).toBe('flex');
    expect(servedTier('flex', key({ tiers: ['default', 'priority'] }))).toBe('default');
    expect(servedTier('priority', null)).toBe('default');
  });
});

describe('settledDeadline', () => {
  it("takes the shortest of the request's, the key's and the deployment's, and none when none names one", () => {
    expect(settledDeadline(5000, key({ deadlineMs: 3000 }), deployment(4000))).toBe(3000);
    expect(settledDeadline(2000, key({ deadlineMs: 3000 }), deployment(4000))).toBe(2000);
    expect(settledDeadline(null, key(), deployment(4000))).toBe(4000);
    expect(settledDeadline(undefined, null, deployment(null))).toBeNull();
  });
});
