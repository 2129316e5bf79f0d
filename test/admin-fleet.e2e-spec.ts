import { hashKey } from '@conveyor/config';
import type { AdminFleet, FleetDeployment } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const ADMIN_KEY = 'admin-fleet-admin-key';
const KEY = 'sk-admin-fleet-every-tier';

/**
 * One worker of two sequences whose replies take three seconds, so requests sent past them wait in the
 * queue long enough to be counted by band; an on-demand deployment no worker holds.
 */
const config = writeDeploymentsFile({
  deployments: [
    { id: 'slow', engine: 'simulated', simulated: { ttftMs: 3000, tpotMs: 5, outputTokens: 2 }, parallel: 2 },
    { id: 'cold', engine: 'simulated', load: 'on-demand', memoryMb: 1 },
  ],
  apiKeys: [{ name: 'every-tier', sha256: hashKey(KEY), tiers: ['auto', 'default', 'flex', 'priority'] }],
});

describe("the admin's fleet detail: workers, sequences busy, work waiting by band", () => {
  let platform: TestPlatform;

  const fleet = async (): Promise<Record<string, FleetDeployment>> => {
    const res = await fetch(`${platform.baseUrl}/v1/admin/fleet`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.status).toBe(200);
    return Object.fromEntries((await readJson<AdminFleet>(res)).data.map((d) => [d.id, d]));
  };
  const chat = (tier: string) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'slow',
        service_tier: tier,
        messages: [{ role: 'user', content: `at ${tier}` }],
        max_tokens: 2,
      }),
    });

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, ADMIN_KEY } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('shows an idle fleet: the live worker with every sequence free, nothing waiting, the cold model cold', async () => {
    const idle = await fleet();
    expect(idle.slow).toMatchObject({
      object: 'fleet.deployment',
      status: 'ready',
      load: 'pinned',
      sequences: { total: 2, busy: 0 },
      waiting: { priority: 0, default: 0, flex: 0, batch: 0 },
      running: 0,
    });
    expect(idle.slow!.workers).toEqual([{ id: expect.any(String), sequences: 2, free: 2 }]);
    expect(idle.cold).toMatchObject({ status: 'cold', load: 'on-demand', sequences: { total: 0, busy: 0 } });
  });

  it('counts the sequences running and each band waiting behind them', async () => {
    const running = [chat('default'), chat('default')];
    // The two sequences are taken before the others are sent, so these wait, one in each band.
    for (let f = await fleet(); f.slow!.sequences.busy !== 2; f = await fleet())
      await new Promise((r) => setTimeout(r, 50));
    const waiting = [chat('priority'), chat('default'), chat('flex')];
    let seen = await fleet();
    for (const until = Date.now() + 2000; Date.now() < until; seen = await fleet()) {
      const w = seen.slow!.waiting;
      if (w.priority + w.default + w.flex === 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen.slow).toMatchObject({
      sequences: { total: 2, busy: 2 },
      waiting: { priority: 1, default: 1, flex: 1, batch: 0 },
      running: 2,
    });
    expect(seen.slow!.workers[0]).toMatchObject({ free: 0 });
    const replies = await Promise.all([...running, ...waiting]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it("is the admin's alone", async () => {
    const res = await fetch(`${platform.baseUrl}/v1/admin/fleet`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(401);
  });
});
