#!/usr/bin/env node
// Makes, lists, changes, rotates and revokes API keys on a running platform, through its admin routes.
//   npm run keys -- create --name team-a [--rpm N] [--tpm N] [--tpd N] [--tiers a,b] [--weight W]
//                          [--deadline-ms N] [--webhook-url U --webhook-secret S]
//   npm run keys -- list [--json] | get NAME | update NAME [options as create] | rotate NAME | revoke NAME
// CONVEYOR_URL names the API (default http://127.0.0.1:8000); ADMIN_KEY is the admin key.
// A new key is printed alone on stdout, so `KEY=$(npm run -s keys -- create --name x)` keeps it.
import { CliError, readCommandLine, runCli } from './lib/cli.mjs';

const USAGE = `usage: npm run keys -- <command> [options]
  create --name NAME [settings]   make a key; prints it once, on stdout
  list [--json]                   every key (never the keys themselves)
  get NAME [--json]               one key
  update NAME [settings]          change a key's settings
  rotate NAME                     a new key for NAME; the old one is refused from now on
  revoke NAME                     delete a key
settings: --rpm N (requests a minute)  --tpm N / --tpd N (tokens a minute / a day)  --tiers a,b
          --weight W  --deadline-ms N  --webhook-url URL --webhook-secret whsec_...
environment: CONVEYOR_URL (default http://127.0.0.1:8000), ADMIN_KEY`;

/** A failure the user can act on: printed as its one-line message, never with a stack trace. */
/**
 * @typedef {{ requests: number, perSeconds: number }} RateLimit
 * @typedef {{ perMinute?: number, perDay?: number }} TokenLimit
 * @typedef {{
 *   name: string, source: 'runtime' | 'configured', redacted_value: string | null, created_at: number | null,
 *   rateLimit: RateLimit | null, tokenLimit: TokenLimit | null, tiers: string[] | null, weight: number | null,
 *   deadlineMs: number | null, webhook: { url: string } | null, key?: string
 * }} ApiKey
 */

/**
 * A whole number the user gave for `option`.
 * @param {string} option
 * @param {string} text
 */
function count(option, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`--${option} must be a whole number above 0 (got "${text}")`, 2);
  return n;
}

/**
 * The settings the options give, in the shape the admin routes take (the deployments file's `apiKeys[]`).
 * @param {Record<string, string | boolean | undefined>} v
 * @returns {Record<string, unknown>}
 */
function settingsOf(v) {
  /** @type {Record<string, unknown>} */
  const body = {};
  const text = (/** @type {string} */ name) => {
    const value = v[name];
    return typeof value === 'string' ? value : undefined;
  };
  const rpm = text('rpm');
  if (rpm !== undefined) body.rateLimit = { requests: count('rpm', rpm), perSeconds: 60 };
  const tpm = text('tpm');
  const tpd = text('tpd');
  if (tpm !== undefined || tpd !== undefined) {
    body.tokenLimit = {
      ...(tpm === undefined ? {} : { perMinute: count('tpm', tpm) }),
      ...(tpd === undefined ? {} : { perDay: count('tpd', tpd) }),
    };
  }
  const tiers = text('tiers');
  if (tiers !== undefined)
    body.tiers = tiers
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  const weight = text('weight');
  if (weight !== undefined) {
    const w = Number(weight);
    if (!Number.isFinite(w)) throw new CliError(`--weight must be a number (got "${weight}")`, 2);
    body.weight = w;
  }
  const deadline = text('deadline-ms');
  if (deadline !== undefined) body.deadlineMs = count('deadline-ms', deadline);
  const url = text('webhook-url');
  const secret = text('webhook-secret');
  if ((url === undefined) !== (secret === undefined))
    throw new CliError('--webhook-url and --webhook-secret go together', 2);
  if (url !== undefined) body.webhook = { url, secret };
  return body;
}

/** The API's root: CONVEYOR_URL without a trailing /v1 (the batch command takes it with one). */
const apiRoot = () => (process.env.CONVEYOR_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '').replace(/\/v1$/, '');

/**
 * Calls an admin route; an error answer becomes its own message.
 * @param {string} method
 * @param {string} path under /v1/admin/keys
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function admin(method, path, body) {
  const adminKey = process.env.ADMIN_KEY;
  if (!adminKey) throw new CliError('Set ADMIN_KEY to the admin key of the API.', 2);
  const url = `${apiRoot()}/v1/admin/keys${path}`;
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new CliError(`Cannot reach the API at ${apiRoot()} (CONVEYOR_URL): ${cause}`);
  }
  const text = await res.text();
  /** @type {any} */
  let answer = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // Not JSON: told below by its status.
  }
  if (!res.ok) {
    const message = answer?.error?.message ?? (text.slice(0, 200) || res.statusText);
    throw new CliError(`${method} ${url} failed with ${res.status}: ${message}`);
  }
  return answer;
}

/** @param {unknown} v */
const cell = (v) => (v === null || v === undefined ? '-' : String(v));

/**
 * One key as a line of the list.
 * @param {ApiKey} k
 */
function row(k) {
  return [
    k.name,
    k.source,
    k.redacted_value,
    k.created_at === null ? null : new Date(k.created_at * 1000).toISOString().slice(0, 19) + 'Z',
    k.rateLimit ? `${k.rateLimit.requests}/${k.rateLimit.perSeconds}s` : null,
    k.tokenLimit?.perMinute,
    k.tokenLimit?.perDay,
    k.tiers?.join(','),
    k.weight,
    k.deadlineMs,
    k.webhook?.url,
  ].map(cell);
}

/** @param {string[][]} rows */
function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const HEADER = ['NAME', 'SOURCE', 'KEY', 'CREATED', 'RATE', 'TPM', 'TPD', 'TIERS', 'WEIGHT', 'DEADLINE_MS', 'WEBHOOK'];

/**
 * @param {string[]} positionals
 * @param {string} command
 */
function nameArg(positionals, command) {
  if (positionals.length !== 2) throw new CliError(`usage: npm run keys -- ${command} NAME`, 2);
  return encodeURIComponent(positionals[1]);
}

/** @returns {Promise<number>} the exit code */
async function main() {
  const { values, positionals } = readCommandLine(
    {
      name: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      tpd: { type: 'string' },
      tiers: { type: 'string' },
      weight: { type: 'string' },
      'deadline-ms': { type: 'string' },
      'webhook-url': { type: 'string' },
      'webhook-secret': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const command = positionals[0];
  switch (command) {
    case 'create': {
      if (!values.name || positionals.length !== 1)
        throw new CliError('usage: npm run keys -- create --name NAME [settings]', 2);
      /** @type {ApiKey} */
      const key = await admin('POST', '', { name: values.name, ...settingsOf(values) });
      console.error(`Created the key ${key.name} (${key.redacted_value}); it is shown this once:`);
      console.log(key.key);
      return 0;
    }
    case 'list': {
      /** @type {{ data: ApiKey[] }} */
      const list = await admin('GET', '');
      console.log(values.json ? JSON.stringify(list.data, null, 2) : table([HEADER, ...list.data.map(row)]));
      return 0;
    }
    case 'get': {
      /** @type {ApiKey} */
      const key = await admin('GET', `/${nameArg(positionals, 'get')}`);
      console.log(values.json ? JSON.stringify(key, null, 2) : table([HEADER, row(key)]));
      return 0;
    }
    case 'update': {
      const body = settingsOf(values);
      if (!Object.keys(body).length) throw new CliError('update: give at least one setting to change', 2);
      /** @type {ApiKey} */
      const key = await admin('POST', `/${nameArg(positionals, 'update')}`, body);
      console.log(table([HEADER, row(key)]));
      return 0;
    }
    case 'rotate': {
      /** @type {ApiKey} */
      const key = await admin('POST', `/${nameArg(positionals, 'rotate')}/rotate`);
      console.error(
        `Rotated the key ${key.name} (${key.redacted_value}); the old key is refused from now on. The new one:`,
      );
      console.log(key.key);
      return 0;
    }
    case 'revoke': {
      await admin('DELETE', `/${nameArg(positionals, 'revoke')}`);
      console.error(`Revoked the key ${positionals[1]}.`);
      return 0;
    }
    default:
      throw new CliError(command === undefined ? USAGE : `Unknown command "${command}".\n${USAGE}`, 2);
  }
}

await runCli('keys', main);
