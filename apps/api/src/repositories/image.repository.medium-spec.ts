import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { imageJobsKey, imageKey } from '@conveyor/queue';
import type { DecodedImage } from '@conveyor/protocol';
import { apiRedis } from './api-redis.js';
import { ImageRepository } from './image.repository.js';
import { untilConnected } from '../../../../test/support/connected.js';
import type { CommandConnection } from '@conveyor/redis';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DAY_MS = 24 * 60 * 60 * 1000;

/** An image as validation hands it over: only its hash and bytes matter to the store. */
function image(bytes: Buffer, sha256 = createHash('sha256').update(bytes).digest('hex')): DecodedImage {
  return { ref: { sha256, mime: 'image/png', bytes: bytes.length, width: 1, height: 1 }, data: bytes };
}

/** Resolves once the store answers: releasing what no job holds changes nothing. */
const connected = (store: ImageRepository) => untilConnected(() => store.release('probe', ['0'.repeat(64)]));

describe('ImageRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings and the request deadline are read by the store.
  const config = { redis: { url, prefix }, api: { requestTimeoutMs: 600_000 } } as PlatformConfig;
  let redis: Redis;
  let store: ImageRepository;
  /** A second store, as another API replica has: its scripts interleave with the first's. */
  let other: ImageRepository;
  const connections: CommandConnection[] = [];

  beforeAll(async () => {
    redis = new Redis(url);
    connections.push(apiRedis(config), apiRedis(config));
    store = new ImageRepository(config, connections[0]!);
    other = new ImageRepository(config, connections[1]!);
    // Its connection queues nothing while it connects (requests are refused at once instead): wait for it.
    await connected(store);
    await connected(other);
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await Promise.all(connections.map((c) => c.onApplicationShutdown()));
  });

  const keysOf = (sha: string) => [imageKey(prefix, sha), imageJobsKey(prefix, sha)] as const;

  it('stores an image once however many jobs carry it, with both keys expiring after a day', async () => {
    const bytes = randomBytes(4096);
    const png = image(bytes);
    await store.hold('job-1', [png]);
    await other.hold('job-2', [png]);
    const [bytesKey, jobsKey] = keysOf(png.ref.sha256);
    expect(await redis.keys(`${prefix}:image:*`)).toHaveLength(2);
    expect((await redis.getBuffer(bytesKey))?.equals(bytes)).toBe(true);
    expect((await redis.smembers(jobsKey)).sort()).toEqual(['job-1', 'job-2']);
    for (const key of [bytesKey, jobsKey]) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(DAY_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(DAY_MS);
    }
  });

  it('refers to an image already stored without writing its bytes again', async () => {
    const first = image(randomBytes(64));
    await store.hold('job-a', [first]);
    // Other bytes under the same hash (no real image could do this): the stored ones stay.
    await store.hold('job-b', [image(randomBytes(64), first.ref.sha256)]);
    expect((await redis.getBuffer(imageKey(prefix, first.ref.sha256)))?.equals(first.data)).toBe(true);
  });

  it('deletes an image with the last job that refers to it, and only then', async () => {
    const png = image(randomBytes(256));
    const [bytesKey, jobsKey] = keysOf(png.ref.sha256);
    await store.hold('job-x', [png]);
    await store.hold('job-y', [png]);
    await store.release('job-x', [png.ref.sha256]);
    expect(await redis.exists(bytesKey)).toBe(1);
    expect(await redis.smembers(jobsKey)).toEqual(['job-y']);
    // Released twice: nothing changes.
    await store.release('job-x', [png.ref.sha256]);
    expect(await redis.exists(bytesKey)).toBe(1);
    await store.release('job-y', [png.ref.sha256]);
    expect(await redis.exists(bytesKey, jobsKey)).toBe(0);
    // A release after the image is gone is harmless too.
    await store.release('job-y', [png.ref.sha256]);
    expect(await redis.exists(bytesKey, jobsKey)).toBe(0);
  });

  it('holds several images for one job and releases them together', async () => {
    const images = [image(randomBytes(32)), image(randomBytes(32)), image(randomBytes(32))];
    await store.hold('job-many', images);
    for (const { ref } of images) expect(await redis.sismember(imageJobsKey(prefix, ref.sha256), 'job-many')).toBe(1);
    await store.release(
      'job-many',
      images.map((i) => i.ref.sha256),
    );
    for (const { ref } of images) expect(await redis.exists(...keysOf(ref.sha256))).toBe(0);
  });

  it('never loses an image a job holds to the release of another, however the two interleave', async () => {
    const png = image(randomBytes(8192));
    const [bytesKey, jobsKey] = keysOf(png.ref.sha256);
    await store.hold('turn-0', [png]);
    // Each turn of a conversation sends the image again while the job of the turn before ends.
    for (let turn = 1; turn <= 100; turn++) {
      await Promise.all([store.hold(`turn-${turn}`, [png]), other.release(`turn-${turn - 1}`, [png.ref.sha256])]);
      expect(await redis.smembers(jobsKey)).toEqual([`turn-${turn}`]);
      expect((await redis.getBuffer(bytesKey))?.equals(png.data)).toBe(true);
    }
    await other.release('turn-100', [png.ref.sha256]);
    expect(await redis.exists(bytesKey, jobsKey)).toBe(0);
  });

  it('ends with no image when many jobs hold and release one image at once', async () => {
    const png = image(randomBytes(1024));
    const jobs = Array.from({ length: 50 }, (_, i) => `many-${i}`);
    await Promise.all(jobs.map((job, i) => (i % 2 ? store : other).hold(job, [png])));
    expect(await redis.scard(imageJobsKey(prefix, png.ref.sha256))).toBe(50);
    await Promise.all(jobs.map((job, i) => (i % 2 ? other : store).release(job, [png.ref.sha256])));
    expect(await redis.exists(...keysOf(png.ref.sha256))).toBe(0);
  });
});
