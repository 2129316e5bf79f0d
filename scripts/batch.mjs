#!/usr/bin/env node
// Submits a JSONL batch, shows its progress until it ends, and writes the output and error files.
//   node scripts/batch.mjs requests.jsonl [--base-url URL] [--api-key KEY] [--window 24h] [--out DIR]
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { fileFromPath } from './file-from-path.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'base-url': { type: 'string', default: process.env.CONVEYOR_URL ?? 'http://127.0.0.1:8000/v1' },
    'api-key': { type: 'string', default: process.env.CONVEYOR_API_KEY ?? 'none' },
    window: { type: 'string', default: '24h' },
    out: { type: 'string', default: '.' },
    interval: { type: 'string', default: '1000' },
  },
});
const input = positionals[0];
if (!input) {
  console.error('usage: npm run batch -- <requests.jsonl> [--base-url URL] [--api-key KEY] [--window 24h] [--out DIR]');
  process.exit(2);
}

const client = new OpenAI({ baseURL: values['base-url'], apiKey: values['api-key'] });
const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);
const tty = process.stderr.isTTY;

function bar(done, total, width = 30) {
  const filled = total ? Math.round((done / total) * width) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

function duration(seconds) {
  if (!Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

async function download(fileId, name) {
  if (!fileId) return null;
  const path = join(resolve(values.out), name);
  const res = await client.files.content(fileId);
  await pipeline(Readable.fromWeb(res.body), createWriteStream(path));
  return path;
}

const file = await client.files.create({ file: await fileFromPath(input), purpose: 'batch' });
let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: values.window });
console.error(`Submitted ${basename(input)} as ${batch.id} (file ${file.id})`);

// Ctrl-C cancels the batch, then the loop below reports and downloads what finished.
process.once('SIGINT', () => {
  console.error('\nCancelling…');
  void client.batches.cancel(batch.id).catch(() => undefined);
});

const started = Date.now();
let lastLine = '';
while (!FINAL.has(batch.status)) {
  await new Promise((r) => setTimeout(r, Number(values.interval)));
  batch = await client.batches.retrieve(batch.id);
  const { total = 0, completed = 0, failed = 0 } = batch.request_counts ?? {};
  const done = completed + failed;
  const elapsed = (Date.now() - started) / 1000;
  const rate = done / elapsed;
  const line = `${bar(done, total)} ${done}/${total} (${completed} ok, ${failed} failed) ${rate.toFixed(1)}/s ETA ${duration((total - done) / rate)} · ${batch.status}`;
  if (tty) process.stderr.write(`\r${line}\x1b[K`);
  else if (line !== lastLine) console.error(line);
  lastLine = line;
}
if (tty) process.stderr.write('\n');

await mkdir(resolve(values.out), { recursive: true });
const output = await download(batch.output_file_id, `${batch.id}_output.jsonl`);
const errors = await download(batch.error_file_id, `${batch.id}_errors.jsonl`);
console.error(`Batch ${batch.status}: ${JSON.stringify(batch.request_counts)}`);
for (const e of batch.errors?.data ?? []) console.error(`  line ${e.line ?? '-'}: ${e.message}`);
if (output) console.log(output);
if (errors) console.log(errors);
process.exit(batch.status === 'completed' ? 0 : 1);
