import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const ROOT = resolve(import.meta.dirname, '..');
const COMMITTED = resolve(ROOT, 'apps/api/openapi.json');

describe('API documentation', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0 });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('the committed OpenAPI document is the one the code generates (npm run openapi rewrites it)', () => {
    const check = spawnSync(process.execPath, ['dist/apps/api/src/openapi.cli.js', '--check', COMMITTED], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('serves that document, a page listing it, and points the root at both', async () => {
    const served = await readJson<unknown>(await fetch(`${platform.baseUrl}/openapi.json`));
    expect(served).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));
    const page = await (await fetch(`${platform.baseUrl}/docs`)).text();
    expect(page).toContain('<code>/v1/chat/completions</code>');
    expect(page).toContain('<code>/environments/production/predict</code>');
    const root = await fetch(`${platform.baseUrl}/`);
    expect(root.status).toBe(200);
    expect(await root.json()).toEqual({
      object: 'conveyor',
      docs: '/docs',
      openapi: '/openapi.json',
      models: '/v1/models',
    });
  });

  it('says how to turn the queue dashboard on when it is off', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await fetch(`${platform.baseUrl}${path}`);
      expect(res.status).toBe(404);
      const body = await readJson<OpenAiErrorBody>(res);
      expect(body.error).toMatchObject({ type: 'not_found_error', code: 'dashboard_disabled' });
      expect(body.error.message).toMatch(/ADMIN_KEY/);
    }
  });
});
