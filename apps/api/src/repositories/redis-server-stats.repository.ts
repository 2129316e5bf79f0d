import { Injectable } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { RedisServerStats } from './redis-server-stats.port.js';

/** `total_commands_processed` of an `INFO stats` reply. */
function commandsOf(info: string): number {
  const found = /^total_commands_processed:(\d+)/m.exec(info);
  return found ? Number(found[1]) : 0;
}

/** Reads `INFO stats` of the server, or of every primary of a cluster (each counts only its own commands). */
@Injectable()
export class RedisServerStatsRepository extends RedisServerStats {
  private readonly redis: RedisClient;

  constructor({ redis }: CommandConnection) {
    super();
    this.redis = redis;
  }

  async commandsProcessed(): Promise<number> {
    const servers = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const infos = await Promise.all(servers.map((server) => server.info('stats')));
    return infos.reduce((sum, info) => sum + commandsOf(info), 0);
  }
}
