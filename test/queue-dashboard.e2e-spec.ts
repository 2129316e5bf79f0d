import { chromium, type Browser } from 'playwright-core';
import { chromiumPath, HEADLESS_ARGS } from './support/chromium.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const ADMIN_KEY = 'dashboard-admin-key';
const executablePath = chromiumPath();
const describeInBrowser = executablePath ? describe : describe.skip;

describeInBrowser('queue dashboard behind the admin key, in headless Chromium', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let finishedId: string;

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        { id: 'alpha', model: 'tiny', parallel: 1, contextSize: 512 },
        { id: 'beta', model: 'tiny', parallel: 1, contextSize: 512 },
      ],
    });
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, ADMIN_KEY } });
    browser = await chromium.launch({ executablePath: executablePath!, args: HEADLESS_ARGS });
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'alpha', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 }),
    });
    expect(res.status).toBe(200);
    // The queue's job id is the request id: the completion id without its `chatcmpl-` prefix.
    finishedId = ((await res.json()) as { id: string }).id.slice('chatcmpl-'.length);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('refuses the board and its API without the admin key, and asks a browser for it', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const none = await fetch(`${platform.baseUrl}${path}`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="Conveyor admin"/);
      expect(await none.json()).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
      const wrong = await fetch(`${platform.baseUrl}${path}`, { headers: { authorization: 'Bearer not-the-key' } });
      expect(wrong.status).toBe(401);
    }
    for (const httpCredentials of [undefined, { username: 'admin', password: 'not-the-key' }]) {
      const context = await browser.newContext({ httpCredentials });
      try {
        const page = await context.newPage();
        // Chromium either gives up on the challenge or shows the 401 it got after retrying with the wrong key.
        const outcome = await page.goto(`${platform.baseUrl}/admin/queues`).then(
          (answer) => `status ${answer?.status()}`,
          (err: Error) => err.message,
        );
        expect(outcome).toMatch(/status 401|ERR_INVALID_AUTH_CREDENTIALS/);
      } finally {
        await context.close();
      }
    }
  });

  it('shows every deployment queue and a finished job to a browser holding the key', async () => {
    const context = await browser.newContext({ httpCredentials: { username: 'admin', password: ADMIN_KEY } });
    try {
      const page = await context.newPage();
      const answer = await page.goto(`${platform.baseUrl}/admin/queues`);
      expect(answer?.status()).toBe(200);
      await page.getByText('jobs.alpha').first().waitFor({ timeout: 15_000 });
      await page.getByText('jobs.beta').first().waitFor({ timeout: 15_000 });

      await page.goto(`${platform.baseUrl}/admin/queues/queue/jobs.alpha?status=completed`);
      await page
        .getByText(finishedId)
        .first()
        .waitFor({ timeout: 15_000 })
        .catch(async (err: unknown) => {
          throw new Error(
            `job ${finishedId} not on the page: ${(await page.locator('body').innerText()).slice(0, 2000)}`,
            { cause: err },
          );
        });
    } finally {
      await context.close();
    }
  });

  it("serves the board API to a script with the key as a Bearer token, the workers' own queues listed too", async () => {
    const res = await fetch(`${platform.baseUrl}/admin/queues/api/queues`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    // Each deployment's queue, and beside it the queue of each worker routing sends its jobs to.
    const names = body.queues.map((q) => q.name);
    expect(names.filter((n) => !n.includes('@')).sort()).toEqual(['jobs.alpha', 'jobs.beta']);
    expect(names.some((n) => n.startsWith('jobs.alpha@'))).toBe(true);
    expect(names.some((n) => n.startsWith('jobs.beta@'))).toBe(true);
    expect(body.queues.find((q) => q.name === 'jobs.alpha')?.counts.completed).toBe(1);
  });
});
