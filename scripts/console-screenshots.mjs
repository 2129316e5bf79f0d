#!/usr/bin/env node
// Takes the console's screenshots for docs/console.md: the API and a worker from this checkout's build on a
// Redis of their own, two keys and the admin key, a batch run through the page, then each section in
// headless Chromium (Debian's, or CHROMIUM_PATH).
//   node scripts/console-screenshots.mjs [out directory, default docs/console]
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { Children, stopChildrenOnSignal } from '../bench/lib/processes.mjs';

const root = resolve(import.meta.dirname, '..');
const out = resolve(process.argv[2] ?? 'docs/console');
mkdirSync(out, { recursive: true });
const sha = (/** @type {string} */ key) => createHash('sha256').update(key).digest('hex');
const dir = mkdtempSync(join(tmpdir(), 'conveyor-console-'));
const configFile = join(dir, 'deployments.json');
writeFileSync(
  configFile,
  JSON.stringify({
    deployments: [
      { id: 'chat', engine: 'simulated', simulated: { ttftMs: 30, tpotMs: 10, outputTokens: 8 }, parallel: 4 },
      { id: 'coder', engine: 'simulated', load: 'on-demand', simulated: { ttftMs: 30, tpotMs: 10 } },
    ],
    apiKeys: [{ name: 'team-a', sha256: sha('sk-team-a'), tokenLimit: { perDay: 200000 } }],
  }),
);
const children = new Children(root);
stopChildrenOnSignal();
const redisUrl = await children.launchRedis();
const base = await children.launchPlatform({
  redisUrl,
  prefix: 'console-shots',
  configFile,
  env: { ADMIN_KEY: 'admin-key', DATA_DIR: join(dir, 'data') },
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const lines = Array.from({ length: 400 }, (_, i) =>
    JSON.stringify({
      custom_id: `q-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: {
        model: 'chat',
        messages: [
          { role: 'system', content: `Label the ticket. House style ${i % 3}.` },
          { role: 'user', content: `Ticket ${i % 350}` },
        ],
        max_tokens: 8,
        temperature: 0,
      },
    }),
  ).join('\n');
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('API key or admin key').fill('sk-team-a');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page
    .getByLabel('JSONL file')
    .setInputFiles({ name: 'tickets.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(lines) });
  await page.getByRole('button', { name: 'Start batch' }).click();
  await page.locator('tr[data-batch] .status', { hasText: 'in_progress' }).first().waitFor({ timeout: 60_000 });
  await page.waitForTimeout(4500);
  await page.screenshot({ path: join(out, 'batches-running.png') });
  await page.locator('tr[data-batch] .status', { hasText: 'completed' }).first().waitFor({ timeout: 120_000 });
  await page.screenshot({ path: join(out, 'batches.png') });
  await page.getByRole('button', { name: 'Usage' }).click();
  await page.locator('#usage-chart canvas').first().waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'usage.png') });

  const admin = await (await browser.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
  await admin.goto(`${base}/console`);
  await admin.getByLabel('API key or admin key').fill('admin-key');
  await admin.getByRole('button', { name: 'Sign in' }).click();
  await admin.getByRole('button', { name: 'Keys' }).click();
  await admin.getByLabel('Name').fill('team-b');
  await admin.getByRole('button', { name: 'Create key' }).click();
  await admin.locator('tr[data-key="team-b"]').waitFor();
  await admin.screenshot({ path: join(out, 'keys.png') });
  await admin.getByRole('button', { name: 'Fleet' }).click();
  await admin.locator('#fleet-rows tr').first().waitFor();
  await admin.waitForTimeout(500);
  await admin.screenshot({ path: join(out, 'fleet.png') });
  console.log(
    `wrote ${['batches-running', 'batches', 'usage', 'keys', 'fleet'].map((n) => `${out}/${n}.png`).join(', ')}`,
  );
} finally {
  await browser.close();
  await children.stopAll();
}
