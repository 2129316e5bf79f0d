import { describe, expect, it } from '@jest/globals';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import type { GenerationJobData } from '@conveyor/queue';
import { configuredKeys } from '../../../../test/support/api-key-fakes.js';
import { InMemoryTokenQuotas } from '../../../../test/support/token-quota-fakes.js';
import { TokenQuota } from '../auth/token-quota.service.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { QueueAdmission, type Admission } from '../repositories/queue-admission.port.js';
import { RequestAdmission } from './request-admission.js';

/** Queue places in memory: each request's, taken and given back. */
class Places extends QueueAdmission {
  readonly held = new Set<string>();
  full = false;
  async reserve(_deployment: string, requestId: string): Promise<Admission> {
    if (this.full) return { admitted: false, queued: 3 };
    this.held.add(requestId);
    return { admitted: true };
  }
  async queued(): Promise<void> {}
  async release(_deployment: string, requestId: string): Promise<void> {
    this.held.delete(requestId);
  }
}

const METERED = 'metered';

function subject(perMinute = 100_000) {
  const base = loadConfig({});
  const config: PlatformConfig = {
    ...base,
    apiKeys: [{ name: METERED, sha256: '00'.repeat(32), tokenLimit: { perMinute }, deadlineMs: 5_000 }],
  };
  const places = new Places();
  const quotas = new InMemoryTokenQuotas();
  const keys = configuredKeys(config);
  const admission = new RequestAdmission(config, places, new TokenQuota(keys, quotas), keys);
  const deployment = config.deployments[0];
  let built = 0;
  const admit = (requestId: string, content = 'Hi') =>
    admission.admit({ deployment, requestId, caller: METERED, route: '/v1/chat/completions' }, ({ now }) => {
      built++;
      return {
        requestId,
        deployment: deployment.id,
        messages: [{ role: 'user', content }],
        sampling: { temperature: 0 },
        stop: [],
        enqueuedAt: now,
      } satisfies GenerationJobData;
    });
  return { places, quotas, admit, built: () => built };
}

describe('RequestAdmission', () => {
  it("admits on the key's terms, reserves the job's tokens, and its ticket's undo gives back both", async () => {
    const s = subject();
    const { ticket, job } = await s.admit('r1');
    expect(ticket).toMatchObject({ tier: 'default', deadlineMs: 5_000 });
    expect(job.enqueuedAt).toBe(ticket.admittedAt);
    expect(ticket.headers['x-ratelimit-limit-tokens']).toBe('100000');
    expect(s.places.held.has('r1')).toBe(true);
    expect(s.quotas.holds.get('r1')).toBeGreaterThan(0);

    ticket.undo();
    await new Promise((r) => setImmediate(r));
    expect(s.places.held.has('r1')).toBe(false);
    expect(s.quotas.settled).toEqual([{ requestId: 'r1', used: 0 }]);
    expect(s.quotas.used.minute).toBe(0);
  });

  it('gives the place back when the token quota refuses the job', async () => {
    const s = subject(5);
    const refused = s.admit('r2', 'a prompt well over five tokens long');
    await expect(refused).rejects.toMatchObject({ status: 429 });
    expect(s.places.held.size).toBe(0);
    expect(s.quotas.holds.size).toBe(0);
  });

  it('builds nothing and reserves nothing for a request refused its place', async () => {
    const s = subject();
    s.places.full = true;
    await expect(s.admit('r3')).rejects.toBeInstanceOf(OpenAiHttpError);
    expect(s.built()).toBe(0);
    expect(s.quotas.holds.size).toBe(0);
  });
});
