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
 * adapters, which take it as their constructor's argument (it is also their injection token). Redis
 * runs one connection's commands in order, whoever sent them. Only what holds a connection for itself
 * has one of its own: a blocking read (XREAD BLOCK, BullMQ's workers) waits on its connection and
 * would hold up every command behind it, and a subscribed connection takes no other commands.
 */
export class CommandConnection {
  /** `redis`, with `scripts` defined on it; `end` closes it at shutdown. */
  constructor(
    readonly redis: RedisClient,
    scripts: readonly LuaScript[],
    private readonly end: () => Promise<void> = async () => redis.disconnect(),
  ) {
    defineScripts(redis, scripts);
  }

  /**
   * A process's connection. Closing drops a request's (`command`) connection at once, and quits a
   * worker's (`background`) one, which sends the writes it holds first.
   */
  static open(settings: RedisSettings, options: CommandConnectionOptions): CommandConnection {
    const redis = createRedis(settings, options.name, options.role, options.logger, options.extra);
    if (options.role === 'command') return new CommandConnection(redis, options.scripts);
    return new CommandConnection(redis, options.scripts, () =>
      redis.quit().then(
        () => undefined,
        () => undefined,
      ),
    );
  }

  /**
   * Closes the connection. Nest calls it at shutdown after every provider that depends on it, so their
   * own shutdowns (withdrawing an announcement, closing queues) still have it.
   */
  onApplicationShutdown(): Promise<void> {
    return this.end();
  }
}
