#!/usr/bin/env node
// Submits a JSONL batch, shows its progress until it ends, and writes the output and error files.
//   npm run batch -- requests.jsonl [--endpoint URL] [--out DIR] [--base-url URL] [--api-key KEY] [--window 24h]
// Relative paths are taken from the folder the command was run in: `npm run` starts scripts in the
// repository root and names the folder it was started from in INIT_CWD.
import { createReadStream, createWriteStream } from 'node:fs';
import { access, constants, mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError, readCommandLine, runCli } from './lib/cli.mjs';
import OpenAI from 'openai';
import { fileFromPath } from './file-from-path.mjs';

/** @typedef {'/v1/chat/completions' | '/v1/completions' | '/v1/embeddings' | '/v1/responses'} Endpoint */

/** @type {readonly Endpoint[]} the routes a batch can run */
const ENDPOINTS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses'];
const USAGE =
  'usage: npm run batch -- <requests.jsonl> [--endpoint URL] [--out DIR] [--base-url URL] [--api-key KEY] [--window 24h]';
const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/**
 * What the batch's plan did (Conveyor's `plan` field on the batch), in one line; null without one.
 * @param {object} batch
 * @returns {string | null}
 */
function planLine(batch) {
  const plan =
    /** @type {{ plan?: { groups: number, repeats_folded: number, prompt_tokens: { total: number, cached: number, folded: number }, prompt_tokens_saved: number } }} */ (
      batch
    ).plan;
  if (!plan) return null;
  const { total, cached, folded } = plan.prompt_tokens;
  const asked = total + folded;
  const saved = asked ? ` (${Math.round((100 * plan.prompt_tokens_saved) / asked)}% of ${asked})` : '';
  return (
    `Plan: ${plan.groups} group(s) of lines sharing a beginning, ${plan.repeats_folded} repeat(s) run once; ` +
    `prompt tokens evaluated ${total - cached}, reused ${cached}, folded ${folded}: ${plan.prompt_tokens_saved} saved${saved}`
  );
}

/** A failure the user can act on: printed as its one-line message, never with a stack trace. */
/**
 * @param {unknown} url
 * @returns {url is Endpoint}
 */
const isEndpoint = (url) => ENDPOINTS.some((endpoint) => endpoint === url);

/** @param {string} text */
const oneLine = (text) => text.replace(/\s+/g, ' ').trim();

/**
 * The innermost cause of an error, as text: for a refused connection, "connect ECONNREFUSED 127.0.0.1:8000".
 * @param {unknown} err
 * @returns {string}
 */
function rootCause(err) {
  let cause = err;
  while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause;
  if (!(cause instanceof Error)) return String(cause);
  const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  return cause.message || code || cause.name;
}

/**
 * What a file-system error means, in a few words.
 * @param {unknown} err
 * @returns {string}
 */
function fsProblem(err) {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  if (code === 'ENOENT') return 'no such file or folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a part of the path is not a folder';
  if (code === 'EEXIST') return 'a file of that name is in the way';
  return err instanceof Error ? err.message : String(err);
}

/**
 * A path the user gave, resolved against the folder the command was run from, and how to name it in
 * messages: as given, with the full path when they differ.
 * @param {string} cwd
 * @param {string} given
 */
function userPath(cwd, given) {
  const path = resolve(cwd, given);
  return { path, shown: path === given ? given : `${given} (${path})` };
}

/**
 * Fails with a message unless `path` is a file this process can read.
 * @param {string} path
 * @param {string} shown
 */
async function assertReadableFile(path, shown) {
  try {
    if (!(await stat(path)).isFile()) throw new CliError(`Cannot read ${shown}: it is not a file.`);
    await access(path, constants.R_OK);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`Cannot read ${shown}: ${fsProblem(err)}.`);
  }
}

/**
 * The first line of `path` with more than white space on it, and its number; null when there is none.
 * Reads no further than that line.
 * @param {string} path
 * @returns {Promise<{ text: string, number: number } | null>}
 */
async function firstRequestLine(path) {
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const read of lines) {
      number++;
      // The server drops a byte-order mark at the start of a file (Windows editors write one); so does this.
      const text = number === 1 ? read.replace(/^\uFEFF/, '') : read;
      if (text.trim()) return { text, number };
    }
    return null;
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * The endpoint a file's requests go to, from the `url` of its first request line.
 * @param {string} path
 * @param {string} name the file's name, for messages
 * @returns {Promise<Endpoint>}
 */
async function endpointOfFile(path, name) {
  const first = await firstRequestLine(path);
  if (!first) throw new CliError(`${name} has no request lines.`);
  const where = `${name} line ${first.number}`;
  /** @type {unknown} */
  let request;
  try {
    request = JSON.parse(first.text);
  } catch {
    throw new CliError(
      `${where} is not valid JSON, so the batch's endpoint cannot be taken from its "url": fix the line or pass --endpoint.`,
    );
  }
  const url = typeof request === 'object' && request !== null && 'url' in request ? request.url : undefined;
  if (isEndpoint(url)) return url;
  throw new CliError(
    `${where} ${url === undefined ? 'has no "url"' : `has "url": ${JSON.stringify(url)}`}; a batch runs one of ` +
      `${ENDPOINTS.join(', ')}: fix the line or pass --endpoint.`,
  );
}

/**
 * The error message of an OpenAI-style error body (`{ error: { message } }`, which the SDK unwraps).
 * @param {unknown} body
 * @returns {string | undefined}
 */
function errorMessage(body) {
  return typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string'
    ? body.message
    : undefined;
}

/**
 * @param {number} done
 * @param {number} total
 * @param {number} [width]
 */
function bar(done, total, width = 30) {
  const filled = total ? Math.round((done / total) * width) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

/** @param {number} seconds */
function duration(seconds) {
  if (!Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

/** @returns {Promise<number>} the exit code: 0 when the batch completed */
async function main() {
  const { values, positionals } = readCommandLine(
    {
      endpoint: { type: 'string' },
      out: { type: 'string' },
      'base-url': { type: 'string', default: process.env.CONVEYOR_URL ?? 'http://127.0.0.1:8000/v1' },
      'api-key': { type: 'string', default: process.env.CONVEYOR_API_KEY ?? 'none' },
      window: { type: 'string', default: '24h' },
      interval: { type: 'string', default: '1000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError(USAGE, 2);
  if (values.endpoint !== undefined && !isEndpoint(values.endpoint))
    throw new CliError(`--endpoint must be one of ${ENDPOINTS.join(', ')} (got "${values.endpoint}")`, 2);
  const interval = Number(values.interval);
  if (!(interval > 0)) throw new CliError(`--interval must be a positive number of ms (got "${values.interval}")`, 2);

  const cwd = process.env.INIT_CWD || process.cwd();
  const input = userPath(cwd, positionals[0]);
  const name = basename(input.path);
  await assertReadableFile(input.path, input.shown);
  const endpoint = values.endpoint ?? (await endpointOfFile(input.path, name));
  // Made before anything is submitted, so a folder that cannot be written fails at once.
  const out = userPath(cwd, values.out ?? '.');
  try {
    await mkdir(out.path, { recursive: true });
    await access(out.path, constants.W_OK);
  } catch (err) {
    throw new CliError(`Cannot write results to ${out.shown}: ${fsProblem(err)}.`);
  }

  const baseUrl = values['base-url'];
  const client = new OpenAI({ baseURL: baseUrl, apiKey: values['api-key'] });
  /**
   * Runs one API call; any failure becomes one line saying what was being done and why it failed.
   * @template T
   * @param {string} doing
   * @param {() => Promise<T>} call
   * @returns {Promise<T>}
   */
  const api = async (doing, call) => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof OpenAI.APIConnectionError)
        throw new CliError(`Cannot reach Conveyor at ${baseUrl} while ${doing}: ${rootCause(err)}.`);
      if (err instanceof OpenAI.APIError) {
        const detail = oneLine(errorMessage(err.error) ?? err.message.replace(/^\d+ /, ''));
        const hint = err.status === 401 ? ' Pass the key with --api-key or CONVEYOR_API_KEY.' : '';
        throw new CliError(`Conveyor refused ${doing}: HTTP ${err.status}: ${detail}${hint}`);
      }
      throw new CliError(`Failed while ${doing}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const file = await api(`uploading ${name}`, async () =>
    client.files.create({ file: await fileFromPath(input.path), purpose: 'batch' }),
  );
  let batch = await api(`creating the batch of ${name}`, () =>
    client.batches.create({
      input_file_id: file.id,
      endpoint,
      // Conveyor takes any duration (such as 1h); the SDK's type names only OpenAI's 24h.
      completion_window: /** @type {'24h'} */ (values.window),
    }),
  );
  console.error(`Submitted ${name} to ${endpoint} as ${batch.id} (file ${file.id})`);

  // Ctrl-C cancels the batch, then the loop below reports and downloads what finished.
  const id = batch.id;
  process.once('SIGINT', () => {
    console.error('\nCancelling…');
    void client.batches.cancel(id).catch(() => undefined);
  });

  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastLine = '';
  while (!FINAL.has(batch.status)) {
    await new Promise((r) => setTimeout(r, interval));
    batch = await api(`following ${id}`, () => client.batches.retrieve(id));
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

  /**
   * Writes a file of the batch to `fileName` in the output folder; null when the batch has no such file.
   * @param {string | null | undefined} fileId
   * @param {string} fileName
   * @returns {Promise<string | null>}
   */
  const download = async (fileId, fileName) => {
    if (!fileId) return null;
    const path = join(out.path, fileName);
    const res = await api(`downloading ${fileName}`, () => client.files.content(fileId));
    if (!res.body) throw new CliError(`Downloading ${fileName} failed: the reply had no body.`);
    try {
      await pipeline(Readable.fromWeb(res.body), createWriteStream(path));
    } catch (err) {
      throw new CliError(`Downloading ${fileName} to ${out.path} failed: ${fsProblem(err)}.`);
    }
    return path;
  };
  const written = [
    await download(batch.output_file_id, `${batch.id}_output.jsonl`),
    await download(batch.error_file_id, `${batch.id}_errors.jsonl`),
  ].filter((path) => path !== null);
  console.error(`Batch ${batch.status}: ${JSON.stringify(batch.request_counts)}`);
  const plan = planLine(batch);
  if (plan) console.error(plan);
  for (const e of batch.errors?.data ?? []) console.error(`  line ${e.line ?? '-'}: ${e.message}`);
  console.error(
    written.length
      ? `Wrote ${written.map((path) => basename(path)).join(' and ')} to ${out.path}`
      : 'The batch has no output or error file to write.',
  );
  for (const path of written) console.log(path);
  return batch.status === 'completed' ? 0 : 1;
}

await runCli('batch', main);
