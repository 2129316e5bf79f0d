import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import type { CommandConnection } from '@conveyor/redis';
import { workerRedis } from '../worker-redis.js';
import { CANCEL_TTL_MS, cancelChannel, cancelsKey } from '@conveyor/queue';
import { STOP } from './cancellation-tracker.port.js';
import { RedisCancellationTracker } from './redis-cancellation.tracker.js';
import { EVENTUALLY_MS } from '../../../../test/support/jobs.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resolves with the signal's reason once it aborts, or 'running' after `ms`. */
function outcome(signal: AbortSignal, ms: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('running'), ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve(signal.reason)), { once: true });
  });
}

describe('RedisCancellationTracker against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  let redis: Redis;
  let service: RedisCancellationTracker;
  let connection: CommandConnection;

  beforeAll(async () => {
    redis = new Redis(url);
    // Only the Redis settings are read by what is tested here.
    const config = { redis: { url, prefix } } as PlatformConfig;
    connection = workerRedis(config);
    service = new RedisCancellationTracker(config, connection);
    await service.onModuleInit();
  });

  afterAll(async () => {
    await redis.del(cancelsKey(prefix));
    redis.disconnect();
    service.onApplicationShutdown();
    await connection.onApplicationShutdown();
  });

  it('aborts a request cancelled before the worker subscribed, found among the marks it read then, with the cancel as reason', async () => {
    // Marked as the API marks a cancel (its publish went to nobody): one live, one lapsed.
    const now = Date.now();
    await redis.zadd(cancelsKey(prefix), now + CANCEL_TTL_MS, 'cancelled-early', now - 1, 'lapsed-early');
    const config = { redis: { url, prefix } } as PlatformConfig;
    const later = new RedisCancellationTracker(config, connection);
    await later.onModuleInit();
    try {
      const signal = later.track('cancelled-early');
      later.abortIfCancelled('cancelled-early');
      expect(await outcome(signal, EVENTUALLY_MS)).toBe(STOP.cancelled);
      later.untrack('cancelled-early');
      const lapsed = later.track('lapsed-early');
      later.abortIfCancelled('lapsed-early');
      expect(await outcome(lapsed, 300)).toBe('running');
      later.untrack('lapsed-early');
    } finally {
      later.onApplicationShutdown();
    }
  });

  it('asks Redis at a job start while it cannot know every cancel, and finds the mark', async () => {
    const config = { redis: { url, prefix } } as PlatformConfig;
    const unsure = new RedisCancellationTracker(config, connection);
    await unsure.onModuleInit();
    try {
      // As after a lost connection, before the marks are read again.
      (unsure as unknown as { knowsAll: boolean }).knowsAll = false;
      await redis.zadd(cancelsKey(prefix), Date.now() + CANCEL_TTL_MS, 'missed');
      const signal = unsure.track('missed');
      unsure.abortIfCancelled('missed');
      expect(await outcome(signal, EVENTUALLY_MS)).toBe(STOP.cancelled);
      unsure.untrack('missed');
    } finally {
      unsure.onApplicationShutdown();
    }
  });

  it('aborts a request whose cancel it heard before the job started, without its mark in Redis', async () => {
    await redis.publish(cancelChannel(prefix), 'heard-early');
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let attempt = 0; attempt < 2; attempt++) {
      const signal = service.track('heard-early');
      service.abortIfCancelled('heard-early');
      expect(await outcome(signal, 2000)).toBe(STOP.cancelled);
      service.untrack('heard-early');
    }
  });

  it('leaves a request nobody cancelled running', async () => {
    const signal = service.track('not-cancelled');
    service.abortIfCancelled('not-cancelled');
    // Nothing to wait for: a moment in which no abort comes (a slower machine only looks longer).
    expect(await outcome(signal, 300)).toBe('running');
    service.untrack('not-cancelled');
  });
});
