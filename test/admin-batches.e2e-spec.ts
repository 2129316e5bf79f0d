import { hashKey } from '@conveyor/config';
import type { AdminBatch, Batch, ListPage, OpenAiErrorBody } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const ADMIN_KEY = 'admin-batches-admin-key';
const ALICE = 'sk-alice-admin-batches';
const BOB = 'sk-bob-admin-batches';

/** Replies slow enough (a second each, one sequence) that a batch of a few lines is still running when cancelled. */
const config = writeDeploymentsFile({
  deployments: [
    { id: 'sim', engine: 'simulated', simulated: { ttftMs: 1000, tpotMs: 5, outputTokens: 2 }, parallel: 1 },
  ],
  apiKeys: [
    { name: 'alice', sha256: hashKey(ALICE) },
    { name: 'bob', sha256: hashKey(BOB) },
  ],
});

describe("the admin's view of every key's batches", () => {
  let platform: TestPlatform;

  const call = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${platform.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
    });
  const chatLine = (i: number) =>
    JSON.stringify({
      custom_id: `line-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'sim', messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 2 },
    });
  /** A batch of `lines` chat lines, started with `key`. */
  const batchOf = async (key: string, lines: number): Promise<Batch> => {
    const form = new FormData();
    form.set('purpose', 'batch');
    const text = Array.from({ length: lines }, (_, i) => chatLine(i)).join('\n') + '\n';
    form.set('file', new Blob([text], { type: 'application/jsonl' }), 'lines.jsonl');
    const file = await readJson<{ id: string }>(await call(key, '/v1/files', { method: 'POST', body: form }));
    const res = await call(key, '/v1/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    expect(res.status).toBe(200);
    return readJson<Batch>(res);
  };
  const adminList = async (query = ''): Promise<ListPage<AdminBatch>> => {
    const res = await call(ADMIN_KEY, `/v1/admin/batches${query}`);
    expect(res.status).toBe(200);
    return readJson<ListPage<AdminBatch>>(res);
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, ADMIN_KEY } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it("lists every key's batches with their owners, Message Batches among them, and one key's on asking", async () => {
    const alices = await batchOf(ALICE, 1);
    const bobs = await batchOf(BOB, 1);
    const message = await call(BOB, '/v1/messages/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          { custom_id: 'm', params: { model: 'sim', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] } },
        ],
      }),
    });
    expect(message.status).toBe(200);
    const { id: messageId } = await readJson<{ id: string }>(message);

    const all = await adminList();
    const owners = Object.fromEntries(all.data.map((b) => [b.id, [b.owner, b.endpoint]]));
    expect(owners).toEqual({
      [alices.id]: ['alice', '/v1/chat/completions'],
      [bobs.id]: ['bob', '/v1/chat/completions'],
      [messageId]: ['bob', '/v1/messages'],
    });
    expect(all.data.map((b) => b.object)).toEqual(['batch', 'batch', 'batch']);
    expect((await adminList('?owner=alice')).data.map((b) => b.id)).toEqual([alices.id]);
    // Pages, newest first, as the keys' own lists.
    const first = await adminList('?limit=2');
    expect(first.has_more).toBe(true);
    const rest = await adminList(`?limit=2&after=${first.last_id}`);
    expect([...first.data, ...rest.data].map((b) => b.id)).toEqual(all.data.map((b) => b.id));
  });

  it('lets the admin cancel any key’s running batch, which ends as its owner’s cancel ends it', async () => {
    const running = await batchOf(ALICE, 20);
    const res = await call(ADMIN_KEY, `/v1/admin/batches/${running.id}/cancel`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await readJson<AdminBatch>(res)).toMatchObject({ id: running.id, owner: 'alice', status: 'cancelling' });
    let seen: Batch | null = null;
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      seen = await readJson<Batch>(await call(ALICE, `/v1/batches/${running.id}`));
      if (seen.status === 'cancelled') break;
    }
    expect(seen?.status).toBe('cancelled');
    expect(seen!.request_counts.completed).toBeLessThan(20);
    // Ended: a second cancel is refused, in OpenAI's shape.
    const again = await call(ADMIN_KEY, `/v1/admin/batches/${running.id}/cancel`, { method: 'POST' });
    expect(again.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(again)).error.code).toBe('batch_not_cancellable');
  });

  it('is the admin’s alone: a key is refused, and a batch id no key has is a 404', async () => {
    expect((await call(ALICE, '/v1/admin/batches')).status).toBe(401);
    expect(
      (await call(ALICE, '/v1/admin/batches/batch_0123456789abcdef01234567/cancel', { method: 'POST' })).status,
    ).toBe(401);
    const missing = await call(ADMIN_KEY, '/v1/admin/batches/batch_0123456789abcdef01234567/cancel', {
      method: 'POST',
    });
    expect(missing.status).toBe(404);
    expect((await call(ADMIN_KEY, '/v1/admin/batches?limit=0')).status).toBe(400);
  });
});
