/**
 * The Redis keys BullMQ 6.7.0 keeps one queue in, `<prefix>:<queue>:<part>`, and its jobs' hashes,
 * `<prefix>:<queue>:<job id>`. Named here only for the scripts and checks that must read BullMQ's
 * state directly; everything else asks a `Queue`.
 */
export type BullQueuePart =
  'wait' | 'active' | 'prioritized' | 'delayed' | 'meta' | 'marker' | 'events' | 'stalled' | 'repeat';

/** The key of one part of a BullMQ queue (named as `deploymentQueueName` or `affinityQueueName` name it). */
export const bullQueueKey = (prefix: string, queue: string, part: BullQueuePart): string =>
  `${prefix}:${queue}:${part}`;

/** What a job's hash key is made of: this, then the job's id (BullMQ's `queue.toKey('')`). */
export const bullJobKeyPrefix = (prefix: string, queue: string): string => `${prefix}:${queue}:`;
