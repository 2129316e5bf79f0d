import { readFile } from 'node:fs/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { hashKey } from '@conveyor/config';
import { chromiumPath, HEADLESS_ARGS } from './support/chromium.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const ADMIN_KEY = 'console-admin-key';
const ALICE = 'sk-alice-0123456789';
const BOB = 'sk-bob-0123456789';
const executablePath = chromiumPath();
const describeInBrowser = executablePath ? describe : describe.skip;

const config = writeDeploymentsFile({
  deployments: [{ id: 'sim', engine: 'simulated', simulated: { ttftMs: 20, tpotMs: 5, outputTokens: 4 }, parallel: 4 }],
  apiKeys: [
    { name: 'alice', sha256: hashKey(ALICE) },
    { name: 'bob', sha256: hashKey(BOB) },
  ],
});

const LINES = Array.from({ length: 12 }, (_, i) =>
  JSON.stringify({
    custom_id: `line-${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'sim', messages: [{ role: 'user', content: `Question ${i}` }], max_tokens: 4 },
  }),
).join('\n');

describeInBrowser('the console in headless Chromium', () => {
  let platform: TestPlatform;
  let browser: Browser;
  /** Every URL the pages asked for: no key may be in one. */
  const urls: string[] = [];

  const signIn = async (key: string): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    page.on('request', (request) => urls.push(request.url()));
    const answer = await page.goto(`${platform.baseUrl}/console`);
    expect(answer?.status()).toBe(200);
    await page.getByLabel('API key or admin key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in' }).waitFor({ timeout: 15_000 });
    return { context, page };
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, ADMIN_KEY } });
    browser = await chromium.launch({ executablePath: executablePath!, args: HEADLESS_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('serves the page and its files from the API, with no key needed and nothing from elsewhere', async () => {
    const page = await fetch(`${platform.baseUrl}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const html = await page.text();
    const files = [...html.matchAll(/<(?:script[^>]*src|link[^>]*href)="([^"]+)"/g)];
    expect(files.length).toBe(4);
    for (const src of files) {
      expect(src[1]).toMatch(/^\/console\/assets\//);
      expect((await fetch(`${platform.baseUrl}${src[1]}`)).status).toBe(200);
    }
    expect((await fetch(`${platform.baseUrl}/console/assets/..%2Fconsole.controller.js`)).status).toBe(404);
  });

  it('lets a key start a batch from a file, watch it finish, download its output and see its usage plotted', async () => {
    const { context, page } = await signIn(ALICE);
    try {
      await page.getByLabel('JSONL file').setInputFiles({
        name: 'questions.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from(LINES),
      });
      await page.getByLabel('Endpoint').selectOption('/v1/chat/completions');
      await page.getByRole('button', { name: 'Start batch' }).click();
      const row = page.locator('tr[data-batch]').first();
      await row.locator('.status', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
      await expect(row.locator('progress').getAttribute('value')).resolves.toBe('12');
      // What the plan did, as the batch reports it.
      expect(await row.textContent()).toMatch(/\d+ groups, \d+ repeats folded, \d+ prompt tokens saved/);
      // Its webhook deliveries: this key has no webhook, so its event went nowhere.
      await row.getByRole('button', { name: /Show the webhook deliveries/ }).click();
      await row.getByText('no webhook event').waitFor({ timeout: 15_000 });

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        row.getByRole('button', { name: /Download the output/ }).click(),
      ]);
      const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id).sort()).toEqual(
        Array.from({ length: 12 }, (_, i) => `line-${i}`).sort(),
      );

      await page.getByRole('button', { name: 'Usage' }).click();
      await page.locator('#usage-chart canvas').first().waitFor({ timeout: 15_000 });
      await page.locator('#usage-rows tr', { hasText: 'sim' }).waitFor({ timeout: 15_000 });
      const input = Number(await page.locator('#usage-rows tr td').nth(2).textContent());
      expect(input).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url).not.toContain(ALICE);
  });

  it("shows a key nothing of another key's batches", async () => {
    const { context, page } = await signIn(BOB);
    try {
      await page.locator('#batches').waitFor();
      // Two refreshes of the list (one every 2 s) have run: it holds none of alice's batches.
      await page.waitForTimeout(4500);
      expect(await page.locator('tr[data-batch]').count()).toBe(0);
      await page.getByRole('button', { name: 'Usage' }).click();
      await page.locator('#usage-chart canvas').first().waitFor({ timeout: 15_000 });
      expect(await page.locator('#usage-rows tr').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("lets the admin make a key, shown once, edit its limits, revoke it, see every key's batches and the fleet", async () => {
    const { context, page } = await signIn(ADMIN_KEY);
    try {
      await page.getByRole('button', { name: 'Keys' }).click();
      await page.getByLabel('Name').fill('carol');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.locator('#new-key code.secret').textContent({ timeout: 15_000 });
      expect(secret).toMatch(/^sk-/);
      // The key made works, and is listed only by a hint of it.
      const models = await fetch(`${platform.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
      expect(models.status).toBe(200);
      const row = page.locator('tr[data-key="carol"]');
      await row.waitFor();
      expect(await row.textContent()).not.toContain(secret!);

      // Its limits, edited on the page, are the admin API's.
      await page.getByRole('button', { name: 'Edit the limits of carol' }).click();
      await page.getByLabel('Tokens per day').last().fill('5000');
      await page.getByLabel('Tiers (comma-separated)').fill('default, flex');
      await page.getByRole('button', { name: 'Save limits' }).click();
      await row.getByText('5000 tokens a day; tiers default, flex').waitFor({ timeout: 15_000 });
      const carol = (await (
        await fetch(`${platform.baseUrl}/v1/admin/keys/carol`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as { tokenLimit: unknown; tiers: unknown };
      expect(carol).toMatchObject({ tokenLimit: { perDay: 5000 }, tiers: ['default', 'flex'] });

      await page.getByRole('button', { name: 'Revoke carol' }).click();
      await row.waitFor({ state: 'detached', timeout: 15_000 });
      const revoked = await fetch(`${platform.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
      expect(revoked.status).toBe(401);

      // Every key's batches, with the key that started each, and no form to start one.
      await page.getByRole('button', { name: 'Batches' }).click();
      const alices = page.locator('tr[data-batch]', { hasText: 'alice' }).first();
      await alices.waitFor({ timeout: 15_000 });
      expect(await alices.textContent()).toContain('completed');
      expect(await page.locator('#batch-form').isVisible()).toBe(false);

      await page.getByRole('button', { name: 'Fleet' }).click();
      const sim = page.locator('#fleet-rows tr', { hasText: 'sim' });
      await sim.waitFor({ timeout: 15_000 });
      expect(await sim.locator('td').nth(2).textContent()).toBe('1');
    } finally {
      await context.close();
    }
    for (const url of urls) expect(url).not.toContain(ADMIN_KEY);
  });
});
