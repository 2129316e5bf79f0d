import type { ClusterConfig, PlatformConfig, SentinelAddress, SentinelConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';

/** `host:port`, or `[v6 address]:port`. */
const SENTINEL_ADDRESS = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

/** REDIS_SENTINELS or REDIS_CLUSTER_NODES: `host:port` entries, comma-separated; each bad entry is a problem of its own. */
function readAddresses(variable: string, raw: string, problems: string[]): SentinelAddress[] {
  const addresses: SentinelAddress[] = [];
  for (const entry of raw.split(',').map((e) => e.trim())) {
    const match = SENTINEL_ADDRESS.exec(entry);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) {
      problems.push(`${variable} entries must be host:port with a port from 1 to 65535 (got "${entry}")`);
      continue;
    }
    addresses.push({ host: match[1] ?? match[2], port });
  }
  return addresses;
}

/**
 * REDIS_CLUSTER_NODES: a cluster's seed nodes. A cluster has no databases (only 0) and no sentinels:
 * a database in REDIS_URL or any Sentinel setting beside it is a mistake to report, not to ignore.
 */
function readCluster(r: EnvReader, url: string, sentinels: boolean): ClusterConfig | null {
  const list = r.optionalString('REDIS_CLUSTER_NODES');
  if (!list) return null;
  r.check(
    !sentinels,
    'REDIS_CLUSTER_NODES and REDIS_SENTINELS are exclusive: a Redis Cluster fails over on its own, without sentinels',
  );
  let database = '';
  try {
    database = new URL(url).pathname.replace(/^\//, '');
  } catch {
    // REDIS_URL's own check reports it.
  }
  r.check(
    database === '' || database === '0',
    `REDIS_URL names database ${database}, but a Redis Cluster only has database 0: drop it from the URL`,
  );
  return { nodes: readAddresses('REDIS_CLUSTER_NODES', list, r.problems) };
}

/**
 * Where Redis is: REDIS_URL names a single Redis; REDIS_SENTINELS and REDIS_SENTINEL_NAME make the
 * sentinels name the primary instead, and REDIS_URL then only contributes the data nodes' password,
 * database and scheme. REDIS_PASSWORD keeps the password out of the URL (it must not be in both).
 */
function readRedisLocation(r: EnvReader): { url: string; sentinel: SentinelConfig | null } {
  let url = r.string('REDIS_URL');
  r.check(/^rediss?:\/\//.test(url), `REDIS_URL must start with redis:// or rediss:// (got "${url}")`);
  const password = r.optionalString('REDIS_PASSWORD');
  if (password && /^rediss?:\/\//.test(url)) {
    try {
      const parsed = new URL(url);
      if (parsed.password) r.problems.push('REDIS_PASSWORD and a password in REDIS_URL are exclusive: set one');
      parsed.password = password;
      url = parsed.toString();
    } catch {
      r.problems.push('REDIS_URL is not a valid URL');
    }
  }

  const list = r.optionalString('REDIS_SENTINELS');
  const name = r.optionalString('REDIS_SENTINEL_NAME');
  const sentinelPassword = r.optionalString('REDIS_SENTINEL_PASSWORD');
  if (!list) {
    r.check(!name, 'REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not: name the sentinels too');
    r.check(!sentinelPassword, 'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not: name the sentinels too');
    return { url, sentinel: null };
  }
  r.check(!!name, "REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the primary's name as the sentinels know it");
  r.check(
    !name || /^[A-Za-z0-9_.-]+$/.test(name),
    `REDIS_SENTINEL_NAME must be letters, digits, '.', '_' or '-' (got "${name}")`,
  );
  return {
    url,
    sentinel: {
      sentinels: readAddresses('REDIS_SENTINELS', list, r.problems),
      name: name ?? '',
      password: sentinelPassword ?? null,
    },
  };
}

/** Where Redis is, the prefix of the platform's keys in it, and how long they live. */
export function readRedisConfig(r: EnvReader): PlatformConfig['redis'] {
  const location = readRedisLocation(r);
  const cluster = readCluster(r, location.url, location.sentinel !== null);
  const prefix = r.string('REDIS_PREFIX');
  r.check(/^[A-Za-z0-9_.-]+$/.test(prefix), `REDIS_PREFIX must be letters, digits, '.', '_' or '-' (got "${prefix}")`);
  return {
    ...location,
    cluster,
    prefix,
    replyTtlMs: r.int('REPLY_TTL_MS'),
    responseTtlMs: r.int('RESPONSE_TTL_MS'),
    jobRetentionSeconds: r.int('JOB_RETENTION_SECONDS'),
  };
}
