import type { RedisOptions as BullConnectionOptions } from 'bullmq';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ClusterConfig, PlatformConfig, SentinelConfig } from '@conveyor/config';

export type RedisSettings = PlatformConfig['redis'];

/**
 * A connection to the platform's Redis: a plain (or Sentinel-following) client, or a Cluster client
 * when REDIS_CLUSTER_NODES is set. Both take the same commands; on a cluster, every script, MULTI and
 * pipeline keeps its keys in one slot (the hash tags in `@conveyor/queue`'s key names).
 */
export type RedisClient = Redis | Cluster;

/**
 * What a connection is for, which decides how it behaves while Redis is away:
 * - `command`: fails a command at once (no offline queue), so a client request gets an error it can report;
 * - `background`: a worker's writes (reply events, batch results, heartbeats): held while reconnecting, for
 *   as long as Redis is away, then sent in order. Giving up after a few retries made a failover (seconds
 *   with tight sentinel settings, 30 s with their defaults) fail replies already under way;
 * - `blocking`: waits as long as it takes (BullMQ workers, blocking reads);
 * - `subscriber`: pub/sub, resubscribed on reconnect.
 */
export type ConnectionRole = 'command' | 'background' | 'blocking' | 'subscriber';

const MAX_RETRIES: Record<ConnectionRole, number | null> = {
  command: 2,
  background: null,
  blocking: null,
  subscriber: null,
};

/** Longest wait between reconnect attempts: service resumes within about this long of Redis returning. */
export const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * Longest a connection attempt may take. A primary that died with its host (no one left to refuse
 * the connection) would otherwise hold each attempt for ioredis's 10 s, and the connection would
 * reach the primary a failover promoted that much later.
 */
export const CONNECT_TIMEOUT_MS = 2000;

const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

/**
 * A node that became a replica (a primary demoted while it stayed up: a manual failover, a partition
 * that healed) refuses writes with READONLY, inside scripts too. Reconnecting asks the sentinels
 * again, and ioredis settles only on a node whose INFO says it is a primary (`role: 'master'`). The
 * command is failed rather than resent: it may belong to a transaction or pipeline that cannot be
 * replayed piecemeal, and its caller already handles errors.
 */
const reconnectOnReadOnly = (err: Error): boolean => err.message.includes('READONLY');

/** Reports a connection's errors once per outage, as structured log lines, never as ioredis's "Unhandled error event". */
export interface ConnectionLogger {
  warn(message: string): void;
}

/**
 * Options for an ioredis client or a BullMQ connection, from the one place that knows how the
 * platform reaches Redis. BullMQ takes the same options object (with `url`), so queues, workers
 * and plain clients reconnect alike.
 */
export function connectionOptions(settings: RedisSettings, name: string, role: ConnectionRole): BullConnectionOptions {
  return clientOptions(settings, name, role);
}

/** How a connection finds the primary through Sentinel and follows it across failovers. */
interface SentinelOptions {
  sentinels: { host: string; port: number }[];
  name: string;
  sentinelPassword?: string;
  role: 'master';
  enableTLSForSentinelMode: boolean;
  reconnectOnError: (err: Error) => boolean;
}

/** The options both kinds of client take: ioredis's and BullMQ's option types differ, these fit both. */
interface SharedOptions extends Partial<SentinelOptions> {
  url: string;
  connectionName: string;
  retryStrategy: (attempt: number) => number;
  connectTimeout: number;
  enableOfflineQueue: boolean;
  maxRetriesPerRequest: number | null;
}

function clientOptions(settings: RedisSettings, name: string, role: ConnectionRole): SharedOptions {
  return {
    url: settings.url,
    connectionName: name,
    retryStrategy: reconnectDelay,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableOfflineQueue: role !== 'command',
    maxRetriesPerRequest: MAX_RETRIES[role],
    ...(settings.sentinel ? sentinelOptions(settings.sentinel, settings.url) : {}),
  };
}

/**
 * With sentinels, REDIS_URL's host and port are not used: each (re)connection asks the sentinels
 * for the primary. Its password and database still apply to the data nodes, and rediss:// still
 * means TLS to them (ioredis only applies `tls` to them with enableTLSForSentinelMode).
 */
function sentinelOptions(sentinel: SentinelConfig, url: string): SentinelOptions {
  return {
    sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
    name: sentinel.name,
    ...(sentinel.password ? { sentinelPassword: sentinel.password } : {}),
    // ioredis's default, spelled out: a node that answers as a replica is left for the next sentinel's answer.
    role: 'master',
    enableTLSForSentinelMode: url.startsWith('rediss://'),
    // Not ioredis's failoverDetector, which would move every connection at the sentinels' +switch-master:
    // in ioredis 6.0 its sentinel connections have no error listener, so each retry while a sentinel is
    // down prints a non-JSON "[ioredis] Unhandled error event" line, and each client keeps up to ten of
    // them open. Writers move at their first READONLY instead; a reader left on a demoted node still
    // gets every entry and message through replication, and moves when that node goes away.
    reconnectOnError: reconnectOnReadOnly,
  };
}

/**
 * How many times a command is sent again while its slot has no reachable primary (each after
 * `CLUSTER_RETRY_DELAY_MS`, the slots asked for again): ioredis's 16 for a `command` connection, so a
 * client request fails within about two seconds, as with no offline queue on a single Redis; the other
 * roles hold their commands through a failover, as they do while a single Redis is away.
 */
const CLUSTER_RETRIES: Record<ConnectionRole, number> = {
  command: 16,
  background: 3000,
  blocking: 3000,
  subscriber: 3000,
};
const CLUSTER_RETRY_DELAY_MS = 100;
const SLOTS_REFRESH_MS = 5000;

/**
 * Options of a Cluster client. Each node connection is made from `redisOptions`, with REDIS_URL's
 * user, password and TLS (a cluster has only database 0; the config refuses another). ioredis does
 * not reconnect to a node that went away: it asks the others for the slots again, and a command
 * for a slot whose primary died is sent again until its replica has taken over.
 */
export function clusterOptions(
  settings: RedisSettings,
  name: string,
  role: ConnectionRole,
): ClusterOptions & { redisOptions: RedisOptions } {
  const url = new URL(settings.url);
  return {
    clusterRetryStrategy: reconnectDelay,
    enableOfflineQueue: role !== 'command',
    maxRedirections: CLUSTER_RETRIES[role],
    retryDelayOnFailover: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
    // The shards' primaries serve every command: a replica's copy may lag, and reply streams must not.
    scaleReads: 'master',
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    // ioredis reads the slots again only when a command meets a moved or dead node; reading them every
    // few seconds too lets a client that sent nothing to the failed shard see its replica take over.
    slotsRefreshInterval: SLOTS_REFRESH_MS,
    redisOptions: {
      connectionName: name,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: MAX_RETRIES[role],
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

function createCluster(
  settings: RedisSettings,
  cluster: ClusterConfig,
  name: string,
  role: ConnectionRole,
  extra: Pick<RedisOptions, 'enableAutoPipelining'> = {},
): Cluster {
  return new Cluster(
    cluster.nodes.map(({ host, port }) => ({ host, port })),
    { ...clusterOptions(settings, name, role), ...extra },
  );
}

/** A client for `role`, its errors reported through `logger` once per outage; `extra` adds client options (auto-pipelining). */
export function createRedis(
  settings: RedisSettings,
  name: string,
  role: ConnectionRole,
  logger?: ConnectionLogger,
  extra: Pick<RedisOptions, 'enableAutoPipelining'> = {},
): RedisClient {
  if (settings.cluster) {
    const cluster = createCluster(settings, settings.cluster, name, role, extra);
    reportErrors(cluster, name, logger);
    return cluster;
  }
  const { url, ...options } = clientOptions(settings, name, role);
  const client = new Redis(url, { ...options, ...extra });
  reportErrors(client, name, logger);
  return client;
}

/** What BullMQ is given to connect a queue or a worker: options it opens its own clients with, or a Cluster client. */
export type BullConnection = BullConnectionOptions | Cluster;

/**
 * BullMQ's connection for a queue or a worker. BullMQ makes plain clients from options, but only
 * takes a cluster as a client of its own: on a cluster this is a Cluster client (which BullMQ
 * duplicates for a worker's blocking reads), and `releaseBullConnection` must disconnect it once
 * the queue or worker is closed, since BullMQ leaves a client it was given open.
 */
export function bullConnection(
  settings: RedisSettings,
  name: string,
  role: ConnectionRole,
  logger?: ConnectionLogger,
): BullConnection {
  if (!settings.cluster) return connectionOptions(settings, name, role);
  const cluster = createCluster(settings, settings.cluster, name, role);
  reportErrors(cluster, name, logger);
  return cluster;
}

/** Disconnects the client `bullConnection` made, if it made one (a cluster's); options need nothing. */
export function releaseBullConnection(connection: BullConnection): void {
  if (connection instanceof Cluster) connection.disconnect();
}

/** Logs the first error of an outage and stays quiet until the connection is ready again. */
export function reportErrors(
  client: { on(event: string, listener: (err: Error) => void): unknown },
  name: string,
  logger?: ConnectionLogger,
): void {
  let reported = false;
  client.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    logger?.warn(`Redis connection ${name}: ${err.message}; reconnecting`);
  });
  client.on('ready', () => (reported = false));
}
