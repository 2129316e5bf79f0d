import type { RedisOptions } from 'ioredis';
import { defineScripts, type LuaScript } from './lua-scripts.js';
import {
  createRedis,
  type ConnectionLogger,
  type ConnectionRole,
  type RedisClient,
  type RedisSettings,
} from './redis-connections.js';

/** How a process's command connection is made. */
export interface CommandConnectionOptions {
  /** Its client name in Redis (CLIENT LIST). */
  name: string;
  /** `command` for an API (a request fails at once while Redis is away), `background` for a worker. */
  role: Extract<ConnectionRole, 'command' | 'background'>;
  /** Every script the process's repositories and adapters call, defined once here. */
  scripts: readonly LuaScript[];
  logger?: ConnectionLogger;
  extra?: Pick<RedisOptions, 'enableAutoPipelining'>;
}

/**
 * The one connection a process sends its commands and scripts on, shared by its repositories and
 * adapters. Redis runs one client's commands in order, whichever caller sent them, and a pipelined
 * connection is not busier for having more callers. Only what holds a connection for itself has one of
 * its own: a blocking read (XREAD BLOCK, BullMQ's workers) waits on its connection and would hold up
 * every command behind it, and a subscribed connection takes no other commands.
 */
export class CommandConnection {
  readonly redis: RedisClient;

  constructor(
    settings: RedisSettings,
    private readonly options: CommandConnectionOptions,
  ) {
    this.redis = createRedis(settings, options.name, options.role, options.logger, options.extra);
    defineScripts(this.redis, options.scripts);
  }

  /**
   * A request's connection is dropped at once; a worker's is quit, which sends the writes it holds
   * first (its callers' shutdowns have run: they depend on it, so Nest stops them before it).
   */
  async close(): Promise<void> {
    if (this.options.role === 'command') this.redis.disconnect();
    else await this.redis.quit().catch(() => undefined);
  }
}
