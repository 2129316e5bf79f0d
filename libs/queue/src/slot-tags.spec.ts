import { afterEach, describe, expect, it } from '@jest/globals';
import { activeBatchesKey, batchDoneKey, batchIndexKey, batchKey, batchLeaseKey, batchResultsKey } from './batch.js';
import {
  admissionKey,
  affinityQueueName,
  deploymentQueueName,
  imageJobsKey,
  imageKey,
  liveWorkersKey,
  replyInboxKey,
  routeBlocksKey,
  routeLoadKey,
  routeQueuesKey,
  usageBucketKey,
  usageCountedKey,
  usageNewKey,
  usageNewMinutesKey,
} from './keys.js';
import { useHashTags } from './slot-tags.js';

/** The text Redis Cluster hashes a key by: its first `{...}` when not empty, else the whole key. */
function hashed(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Every key one of the platform's scripts or transactions uses together, for one deployment, batch and image. */
const together = (p: string): string[][] => [
  // A deployment's queue and its workers' own, its places: taking a job back puts its place back beside it.
  [
    `${p}:${deploymentQueueName('m/1')}:wait`,
    `${p}:${affinityQueueName('m/1', 'w_1')}:wait`,
    admissionKey(p, 'm/1'),
    routeQueuesKey(p, 'm/1'),
  ],
  // Routing: live workers, free sequences, what each worker holds.
  [liveWorkersKey(p, 'm/1'), routeLoadKey(p, 'm/1'), routeBlocksKey(p, 'm/1', 'w_1')],
  // A batch's commit and clean-up; a new batch's listing.
  [batchKey(p, 'b1'), batchDoneKey(p, 'b1'), batchResultsKey(p, 'b1'), batchLeaseKey(p, 'b1')],
  [batchIndexKey(p), activeBatchesKey(p)],
  [imageKey(p, 'ab12'), imageJobsKey(p, 'ab12')],
  // A reply counted, and its day's new counts added to the minute, hour and day buckets.
  [
    usageCountedKey(p, 1_795_892_671, 'r1'),
    usageNewKey(p, 1_795_892_640),
    usageNewMinutesKey(p, 1_795_824_000),
    usageBucketKey(p, '1m', 1_795_892_640),
    usageBucketKey(p, '1h', 1_795_892_400),
    usageBucketKey(p, '1d', 1_795_824_000),
  ],
];

describe('hash tags', () => {
  afterEach(() => useHashTags(false));

  it('leave every key name as it was on a single Redis, so an upgrade finds its queues and batches', () => {
    expect(deploymentQueueName('m/1')).toBe('jobs.m/1');
    expect(affinityQueueName('m/1', 'w_1')).toBe('jobs.m/1@w_1');
    expect(admissionKey('c', 'm/1')).toBe('c:admission:m/1');
    expect(routeBlocksKey('c', 'm/1', 'w_1')).toBe('c:route:m/1:blocks:w_1');
    expect(batchDoneKey('c', 'b1')).toBe('c:batch:b1:done');
    expect([batchIndexKey('c'), activeBatchesKey('c')]).toEqual(['c:batches', 'c:batches:active']);
    expect(imageJobsKey('c', 'ab12')).toBe('c:image:ab12:jobs');
  });

  it('put what is used together in one slot on a cluster, each deployment, batch, image and day of usage in its own', () => {
    useHashTags(true);
    expect(deploymentQueueName('m/1')).toBe('jobs.{m/1}');
    for (const keys of together('c')) expect(new Set(keys.map(hashed)).size).toBe(1);
    const tags = together('c').map((keys) => hashed(keys[0]!));
    expect(tags).toEqual(['m/1', 'm/1', 'b1', 'batches', 'ab12', 'd20785']);
    // BullMQ names every key of a queue `<prefix>:<queue>:<suffix>`: one tag for all of them.
    expect(hashed(`c:${deploymentQueueName('m/1')}:wait`)).toBe(hashed(`c:${deploymentQueueName('m/1')}:meta`));
    expect(hashed(`c:${deploymentQueueName('m/2')}:wait`)).toBe('m/2');
  });

  it('leave the reply inboxes tagged by replica either way: each is read alone', () => {
    expect(replyInboxKey('c', 'r1')).toBe('c:inbox:{r1}');
    useHashTags(true);
    expect(replyInboxKey('c', 'r1')).toBe('c:inbox:{r1}');
  });
});
