import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { batchKey } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import { untilConnected } from '../../../../test/support/connected.js';
import { apiRedis } from './api-redis.js';
import { newBatchRecord, type BatchEnding } from './batch-record.js';
import { BatchRepository } from './batch.repository.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('BatchRepository.end against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings are read by the repository.
  const config = { redis: { url, prefix } } as PlatformConfig;
  let redis: Redis;
  let batches: BatchRepository;
  let connection: CommandConnection;
  const created = (id: string) =>
    batches.create(
      newBatchRecord({
        id,
        owner: 'main',
        endpoint: '/v1/chat/completions',
        input_file_id: 'file-x',
        completion_window: '24h',
        metadata: null,
        created_at: 1,
        expires_at: 2,
      }),
    );

  beforeAll(async () => {
    redis = new Redis(url);
    connection = apiRedis(config);
    batches = new BatchRepository(config, connection);
    await untilConnected(() => batches.active());
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await connection.onApplicationShutdown();
    redis.disconnect();
  });

  it('writes the final status and its event in one step, once: a second end changes nothing', async () => {
    await created('batch_a');
    await batches.update('batch_a', { status: 'in_progress' });
    expect(await batches.end('batch_a', { status: 'completed', completed_at: 10 })).toBe(true);
    const ended = await batches.get('batch_a');
    expect(ended).toMatchObject({
      status: 'completed',
      completed_at: 10,
      ended_event: { object: 'event', type: 'batch.completed', data: { id: 'batch_a' } },
    });
    expect(ended!.ended_event!.id).toMatch(/^evt_[0-9a-f]{24}$/);
    // Another replica ending it too (say as cancelled, having read it before it ended) finds it ended.
    expect(await batches.end('batch_a', { status: 'cancelled', cancelled_at: 11 })).toBe(false);
    expect(await batches.get('batch_a')).toEqual(ended);
  });

  it('gives each ending status its own event type, and ends no batch that has no record', async () => {
    const endings: BatchEnding[] = [
      { status: 'failed', failed_at: 1, errors: [] },
      { status: 'expired', expired_at: 1 },
      { status: 'cancelled', cancelled_at: 1 },
    ];
    for (const ending of endings) {
      const id = `batch_${ending.status}`;
      await created(id);
      expect(await batches.end(id, ending)).toBe(true);
      expect((await batches.get(id))?.ended_event?.type).toBe(`batch.${ending.status}`);
    }
    expect(await batches.end('batch_none', { status: 'completed', completed_at: 1 })).toBe(false);
    expect(await redis.exists(batchKey(prefix, 'batch_none'))).toBe(0);
  });
});
