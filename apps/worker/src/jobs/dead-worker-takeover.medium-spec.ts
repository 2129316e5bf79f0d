import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { defineScripts } from '@conveyor/redis';
import type { PlatformConfig } from '@conveyor/config';
import {
  BATCH_LINE_PRIORITY,
  admissionKey,
  affinityQueueName,
  bullPriorityOf,
  deploymentQueueName,
  workerBeatsKey,
} from '@conveyor/queue';
import { RedisAdmissionPlaces } from '../admission/redis-admission-places.js';
import { WORKER_SCRIPTS, workerRedis } from '../worker-redis.js';
import { Heartbeat } from '../presence/heartbeat.js';
import { bullWorkerId } from '../presence/worker-identity.js';
import { DeadWorkerTakeover } from './dead-worker-takeover.js';
import { EVENTUALLY_MS } from '../../../../test/support/jobs.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const connection = { host: new URL(url).hostname, port: Number(new URL(url).port || 6379), maxRetriesPerRequest: null };
const HEARTBEAT_MS = 100;
const DEAD = 'host_1~000000000001';
const ALIVE = 'host_2~000000000002';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Taking a dead worker's jobs over, against real BullMQ: jobs are taken by hand (getNextJob) with the
 * lock tokens a worker of each process would hold, so which process "died" is up to the test.
 */
describe('DeadWorkerTakeover with real BullMQ and Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const config = {
    redis: { url, prefix },
    api: { queueTimeoutMs: 60_000 },
    worker: { heartbeatMs: HEARTBEAT_MS, maxStalls: 1 },
  } as PlatformConfig;
  const placesConnection = workerRedis(config);
  const places = new RedisAdmissionPlaces(config, placesConnection);
  const clients: Redis[] = [];
  const queues: Queue[] = [];
  const workers: Worker[] = [];
  let n = 0;

  const client = () => {
    const redis = new Redis(url);
    clients.push(redis);
    return redis;
  };
  const queue = (name: string) => {
    const q = new Queue(name, { connection, prefix });
    queues.push(q);
    return q;
  };
  /** Takes the next job of `name` as a worker of process `instance` would: locked with its token. */
  const take = async (name: string, instance: string): Promise<Job> => {
    const worker = new Worker(name, undefined, { connection, prefix, autorun: false });
    workers.push(worker);
    const job = await worker.getNextJob(`${bullWorkerId(instance, 'shared')}:${n++}`, { block: false });
    if (!job) throw new Error(`no job waiting in ${name}`);
    return job;
  };
  const takeover = async (deployments: string[], maxStalls = 1) => {
    // The worker's command connection has its scripts defined as it opens: this one as well.
    const redis = client();
    defineScripts(redis, WORKER_SCRIPTS);
    const t = new DeadWorkerTakeover(
      redis,
      { ...config, worker: { ...config.worker, maxStalls } },
      deployments,
      ALIVE,
      places,
    );
    await redis.ping();
    return t;
  };

  beforeAll(() => Logger.overrideLogger(false));

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await Promise.all(queues.map((q) => q.close()));
    await placesConnection.onApplicationShutdown();
    const redis = client();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    for (const c of clients) c.disconnect();
  });

  it("moves only the dead process's running jobs back to waiting; the next taker runs them as a new attempt", async () => {
    const name = deploymentQueueName('a');
    const q = queue(name);
    await q.add('generate', {}, { jobId: 'plain' });
    await q.add('generate', {}, { jobId: 'other' });
    await q.add('generate', {}, { jobId: 'flex', priority: bullPriorityOf({ tier: 'flex' }) });
    await q.add('generate', {}, { jobId: 'batch-line', priority: BATCH_LINE_PRIORITY });
    await take(name, DEAD);
    await take(name, ALIVE);
    await take(name, DEAD);
    await take(name, DEAD);
    await q.add('generate', {}, { jobId: 'queued-later' });

    const moved = await (await takeover(['a'])).takeOver(name, DEAD);
    expect(moved.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: 'batch-line', to: 'prioritized', priority: BATCH_LINE_PRIORITY, failing: false },
      { id: 'flex', to: 'prioritized', priority: bullPriorityOf({ tier: 'flex' }), failing: false },
      { id: 'plain', to: 'wait', priority: 0, failing: false },
    ]);
    expect(await q.getJobState('plain')).toBe('waiting');
    // Each back in its band: a flex request still ahead of batch lines.
    expect(await q.getJobState('flex')).toBe('prioritized');
    expect(await q.getJobState('batch-line')).toBe('prioritized');
    expect(await q.getJobState('other')).toBe('active');
    const redis = client();
    expect(await redis.exists(`${prefix}:${name}:plain:lock`)).toBe(0);
    expect(await redis.get(`${prefix}:${name}:other:lock`)).toMatch(/^host_2~/);

    // Back at the head of the waiting jobs, ahead of one queued after it; its stall counted, its next run a new attempt.
    const again = await take(name, ALIVE);
    expect(again.id).toBe('plain');
    expect(again.stalledCounter).toBe(1);
    expect(again.attemptsStarted).toBe(2);
  });

  it('gives each job to one of several workers taking over at once', async () => {
    const name = deploymentQueueName('b');
    const q = queue(name);
    for (let i = 0; i < 5; i++) await q.add('generate', {}, { jobId: `j${i}` });
    for (let i = 0; i < 5; i++) await take(name, DEAD);
    const watchers = await Promise.all([takeover(['b']), takeover(['b']), takeover(['b'])]);
    const moved = (await Promise.all(watchers.map((w) => w.takeOver(name, DEAD)))).flat().map((m) => m.id);
    expect(moved.sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4']);
    expect(await q.getWaitingCount()).toBe(5);
  });

  it('marks a job that lost its worker more often than allowed to fail, as BullMQ does', async () => {
    const name = deploymentQueueName('c');
    const q = queue(name);
    await q.add('generate', {}, { jobId: 'crasher' });
    await take(name, DEAD);
    expect(await (await takeover(['c'], 0)).takeOver(name, DEAD)).toEqual([
      { id: 'crasher', to: 'wait', priority: 0, failing: true },
    ]);
    const job = await take(name, ALIVE);
    expect(job.deferredFailure).toBe('job stalled more than allowable limit');
  });

  it("finds a process whose heartbeat lapsed, takes over its jobs in the deployment's queue and its own, and forgets it", async () => {
    const shared = deploymentQueueName('d');
    const own = affinityQueueName('d', 'host_1');
    await queue(shared).add('generate', {}, { jobId: 'from-shared' });
    await queue(shared).add('generate', {}, { jobId: 'of-the-living' });
    // A default-tier request is prioritized in BullMQ, and still holds a place once it waits again.
    await queue(own).add('generate', {}, { jobId: 'routed', priority: bullPriorityOf({ tier: 'default' }) });
    await take(shared, DEAD);
    await take(own, DEAD);
    await take(shared, ALIVE);
    const beat = (instance: string) =>
      new Heartbeat(client(), {
        prefix,
        workerId: instance,
        instance,
        deployments: ['d'],
        heartbeatMs: HEARTBEAT_MS,
      });
    const dead = beat(DEAD);
    const alive = beat(ALIVE);
    await Promise.all([dead.beat(), alive.beat()]);

    const watcher = await takeover(['d']);
    // Before the lapse (and before beats have landed for a whole lapse): nothing moves.
    await watcher.check();
    expect(await queue(shared).getActiveCount()).toBe(2);
    const keepAlive = setInterval(() => void alive.beat(), HEARTBEAT_MS);
    try {
      // Past the lapse; on a loaded machine a late beat starts the steady lapse again, so look until it moves.
      await sleep(HEARTBEAT_MS * 3 + 150);
      for (const until = Date.now() + EVENTUALLY_MS; Date.now() < until; await sleep(HEARTBEAT_MS / 4)) {
        await watcher.check();
        if ((await queue(shared).getJobState('from-shared')) === 'waiting') break;
      }
    } finally {
      clearInterval(keepAlive);
    }
    expect(await queue(shared).getJobState('from-shared')).toBe('waiting');
    expect(await queue(own).getJobState('routed')).toBe('prioritized');
    expect(await queue(shared).getJobState('of-the-living')).toBe('active');
    // Their requests wait again, so they hold places in the deployment's queue again.
    expect((await client().zrange(admissionKey(prefix, 'd'), '0', '-1')).sort()).toEqual(['from-shared', 'routed']);
    const beats = await client().zrange(workerBeatsKey(prefix, 'd'), '0', '-1');
    expect(beats).toEqual([ALIVE]);
  });

  it('does not take every lapse after an outage for a death: the living get a whole lapse to beat again', async () => {
    const shared = deploymentQueueName('e');
    await queue(shared).add('generate', {}, { jobId: 'held' });
    await take(shared, DEAD);
    const beat = (instance: string) =>
      new Heartbeat(client(), { prefix, workerId: instance, instance, deployments: ['e'], heartbeatMs: HEARTBEAT_MS });
    const dead = beat(DEAD);
    const alive = beat(ALIVE);
    const watcher = await takeover(['e']);
    // Steady beats for a lapse, then nobody beats for two lapses, as while the heartbeats' Redis fails over.
    const steady = setInterval(() => void Promise.all([dead.beat(), alive.beat()]), HEARTBEAT_MS);
    await sleep(HEARTBEAT_MS * 4);
    clearInterval(steady);
    await sleep(HEARTBEAT_MS * 6);

    // Back: one process beats first, and every other beat is old. None is taken for dead yet.
    await alive.beat();
    const resumedAt = Date.now();
    await watcher.check();
    expect(await queue(shared).getJobState('held')).toBe('active');

    // The "dead" one never beats again: it is taken for dead once beats have landed a whole lapse (on a
    // loaded machine a late beat starts that lapse again, so look until it happens).
    const keepAlive = setInterval(() => void alive.beat(), HEARTBEAT_MS);
    let movedAt = 0;
    try {
      for (const until = Date.now() + EVENTUALLY_MS; !movedAt && Date.now() < until; await sleep(HEARTBEAT_MS / 4)) {
        await watcher.check();
        if ((await queue(shared).getJobState('held')) === 'waiting') movedAt = Date.now();
      }
    } finally {
      clearInterval(keepAlive);
    }
    expect(movedAt - resumedAt).toBeGreaterThanOrEqual(HEARTBEAT_MS * 3);
    expect(await queue(shared).getJobState('held')).toBe('waiting');
  });
});
