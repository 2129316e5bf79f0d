import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import type { ResponseInputItem, ResponseObject } from '@conveyor/openai';
import { responseKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

import type { Result } from 'ioredis';
import { ResponseStore, type StoredResponse } from './response-store.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    advanceResponse(
      response: string,
      status: string,
      body: string,
      context: string,
      ttlMs: string,
    ): Result<number, Context>;
  }
}

/** Stored responses in Redis: one hash per response, expiring RESPONSE_TTL_MS after its last change. */
@Injectable()
export class ResponseRepository extends ResponseStore {
  private readonly redis: RedisClient;
  private readonly prefix: string;
  private readonly ttlMs: number;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
    this.prefix = config.redis.prefix;
    this.ttlMs = config.redis.responseTtlMs;
  }

  async save(record: StoredResponse): Promise<void> {
    const key = responseKey(this.prefix, record.response.id);
    await this.redis
      .multi()
      .hset(key, {
        owner: record.owner,
        status: record.response.status,
        response: JSON.stringify(record.response),
        input: JSON.stringify(record.input),
        context: JSON.stringify(record.context),
        deployment: record.deployment,
      })
      .pexpire(key, this.ttlMs)
      .exec();
  }

  async get(id: string): Promise<StoredResponse | null> {
    const hash = await this.redis.hgetall(responseKey(this.prefix, id));
    if (!hash.owner || !hash.response) return null;
    return {
      owner: hash.owner,
      response: JSON.parse(hash.response) as StoredResponse['response'],
      input: JSON.parse(hash.input ?? '[]') as StoredResponse['input'],
      context: JSON.parse(hash.context ?? '[]') as StoredResponse['context'],
      deployment: hash.deployment ?? '',
    };
  }

  async advance(response: ResponseObject, context?: readonly ResponseInputItem[]): Promise<boolean> {
    const moved = await this.redis.advanceResponse(
      responseKey(this.prefix, response.id),
      response.status,
      JSON.stringify(response),
      context ? JSON.stringify(context) : '',
      String(this.ttlMs),
    );
    return moved === 1;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.redis.del(responseKey(this.prefix, id))) > 0;
  }
}
