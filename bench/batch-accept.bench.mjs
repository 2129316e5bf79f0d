#!/usr/bin/env node
// How long the API takes to accept a 50,000-line batch file (upload + validation until the batch
// is in progress), and how much Redis memory the batch holds while it waits for workers.
//   node bench/batch-accept.bench.mjs [--lines 50000]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { fileFromPath } from '../scripts/file-from-path.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { lines: { type: 'string', default: '50000' } } });
const LINES = Number(values.lines);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench-${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'conveyor-bench-'));

/** @type {number} */
const port = await new Promise((r) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    // A TCP server's address is an AddressInfo (a string only for a pipe or socket path).
    const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
    s.close(() => r(port));
  });
});

console.log(`# node bench/batch-accept.bench.mjs --lines ${LINES}`);
console.log(`# ${cpus().length} cores, node ${process.version}`);

const input = join(dir, 'requests.jsonl');
/** @param {number} i */
const body = (i) => ({
  model: 'conveyor-tiny',
  messages: [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: `Question number ${i}: what is ${i} + ${i}?` },
  ],
  max_tokens: 32,
  temperature: 0,
});
writeFileSync(
  input,
  Array.from({ length: LINES }, (_, i) =>
    JSON.stringify({ custom_id: `q-${i}`, method: 'POST', url: '/v1/chat/completions', body: body(i) }),
  ).join('\n') + '\n',
);
const bytes = statSync(input).size;

const redis = new Redis(REDIS_URL);

// The API alone: no worker, so every line stays put and the memory the batch takes is what waits.
const api = spawn(process.execPath, [join(ROOT, 'dist/apps/api/src/main.js')], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL,
    REDIS_PREFIX: prefix,
    DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
    QUEUE_TIMEOUT_MS: '86400000',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'none' });
  for (let i = 0; ; i++) {
    try {
      await client.models.list();
      break;
    } catch {
      if (i > 100) throw new Error('API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const t0 = performance.now();
  const file = await client.files.create({ file: await fileFromPath(input), purpose: 'batch' });
  const t1 = performance.now();
  let batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  while (batch.status === 'validating') {
    await new Promise((r) => setTimeout(r, 20));
    batch = await client.batches.retrieve(batch.id);
  }
  const t2 = performance.now();
  await new Promise((r) => setTimeout(r, 500));
  const keys = await redis.keys(`${prefix}:*`);
  let held = 0;
  for (const key of keys) held += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  console.log('');
  console.log(`| measure | value |`);
  console.log(`|---|---|`);
  console.log(`| input | ${LINES} lines, ${(bytes / 2 ** 20).toFixed(1)} MiB |`);
  console.log(`| upload (POST /v1/files, streamed to disk) | ${(t1 - t0).toFixed(0)} ms |`);
  console.log(`| validation until in_progress | ${(t2 - t1).toFixed(0)} ms |`);
  console.log(`| total time to accept | ${(t2 - t0).toFixed(0)} ms |`);
  console.log(`| batch status | ${batch.status}, ${batch.request_counts?.total} requests |`);
  console.log(
    `| Redis memory held by the batch (MEMORY USAGE of its ${keys.length} keys) | ${(held / 1024).toFixed(0)} KiB |`,
  );
  console.log(
    `| per line, if every line sat in Redis | would be ~${((bytes / LINES) * 1.5).toFixed(0)} B x ${LINES} = ${((bytes * 1.5) / 2 ** 20).toFixed(0)} MiB |`,
  );
  await client.batches.cancel(batch.id);
} finally {
  api.kill('SIGTERM');
  await new Promise((r) => api.once('exit', r));
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
