#!/usr/bin/env node
// A Message Batch at Anthropic's limits posted to the API in one body, to see what taking it in costs:
// how long until it is accepted, and the API's memory while the body streams in and the batch is
// validated. No worker runs: the batch waits once validated, which is all this measures.
//   node bench/message-batch-size.bench.mjs [--requests 100000] [--request-bytes 2500] [--after-s 15]
//     [--out message-batch-size]
//
// The body is built in memory here (in this process, not the API's) and sent with its length.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { processMemory } from './lib/redis-info.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { sleep, table } from './lib/stats.mjs';

const USAGE = `usage: node bench/message-batch-size.bench.mjs [--requests 100000] [--request-bytes 2500] [--after-s 15]
  [--out message-batch-size]`;
const options = parseCli(USAGE, {
  requests: { type: 'string', default: '100000' },
  'request-bytes': { type: 'string', default: '2500' },
  'after-s': { type: 'string', default: '15' },
  out: { type: 'string', default: 'message-batch-size' },
});
const REQUESTS = positiveInt('--requests', options.requests);
const REQUEST_BYTES = positiveInt('--request-bytes', options['request-bytes']);
const AFTER_MS = positiveInt('--after-s', options['after-s']) * 1000;
const root = resolve(import.meta.dirname, '..');
assertBuilt(resolve(root, 'dist'));

const mib = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
const children = new Children(root);
const work = mkdtempSync(join(os.tmpdir(), 'conveyor-message-batch-'));
stopChildrenOnSignal(async () => rmSync(work, { recursive: true, force: true }));

try {
  const header = runHeader('bench/message-batch-size.bench.mjs');
  console.log(header.join('\n'));
  const pad = 'x'.repeat(Math.max(0, REQUEST_BYTES - 140));
  const parts = ['{"requests":['];
  for (let i = 0; i < REQUESTS; i++) {
    const params = {
      model: 'conveyor-tiny',
      max_tokens: 4,
      messages: [{ role: 'user', content: `Request ${i} ${pad}` }],
    };
    parts.push((i ? ',' : '') + JSON.stringify({ custom_id: `r-${i}`, params }));
  }
  parts.push(']}');
  const body = Buffer.from(parts.join(''));
  parts.length = 0;

  const redisUrl = await children.launchRedis();
  const port = await freePort();
  const api = await children.launch(
    'api',
    process.execPath,
    ['dist/apps/api/src/main.js'],
    {
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: '',
      REDIS_PREFIX: `bench-message-batch-${randomBytes(4).toString('hex')}`,
      DATA_DIR: join(work, 'data'),
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    /listening on/,
    120_000,
  );
  const pid = /** @type {number} */ (api.proc.pid);
  const before = processMemory(pid)?.rss ?? 0;
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, processMemory(pid)?.rss ?? 0);
      await sleep(250);
    }
  })();

  const t0 = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/v1/messages/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body,
  });
  const answer = /** @type {{ id?: string, request_counts?: { processing: number } }} */ (await res.json());
  const acceptedMs = Date.now() - t0;
  if (res.status !== 200) throw new Error(`POST /v1/messages/batches: ${res.status} ${JSON.stringify(answer)}`);
  // Validation runs once the batch exists: its memory counts too.
  await sleep(AFTER_MS);
  sampling = false;
  await sampler;
  const hwm = processMemory(pid)?.peak ?? 0;

  const rows = [
    ['body', `${REQUESTS.toLocaleString('en-US')} requests, ${mib(body.length)} MiB`],
    ['accepted (200) after', `${(acceptedMs / 1000).toFixed(1)} s`],
    ['requests counted processing', String(answer.request_counts?.processing)],
    ['API RSS before', `${mib(before)} MiB`],
    [`API peak RSS (sampled every 0.25 s, until ${AFTER_MS / 1000} s after) / VmHWM`, `${mib(peak)} / ${mib(hwm)} MiB`],
  ];
  const text = table(['measure', 'value'], rows);
  console.log(`\n${text}`);
  const dir = resolve(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = resolve(dir, `${options.out}.md`);
  writeFileSync(file, `# A Message Batch in one body\n\n${header.map((l) => `- ${l}`).join('\n')}\n\n${text}\n`);
  console.log(`\nwrote ${relative(process.cwd(), file)}`);
} catch (err) {
  console.error(`\nbench failed: ${(err instanceof Error ? err.stack : undefined) ?? err}`);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  rmSync(work, { recursive: true, force: true });
}
