import { isGenerationJob, type QueuedJobData } from './embed-job.js';

/**
 * How an image's bytes stay in Redis exactly while jobs refer to them. Each image is stored once, under
 * `imageKey` (its hash), beside `imageJobsKey`, the set of jobs that refer to it. The API records a job
 * before queueing it; whoever sees the job end for good (the worker that finished it, or the API that
 * withdrew it before any worker took it) releases it, and the image goes with its last job. Both keys
 * also carry an expiry, which only ever lengthens: it clears what a process that died in between left.
 *
 * The scripts are shared so that the API and the workers cannot disagree on these steps.
 * KEYS[1] is the image's key, KEYS[2] its jobs set.
 */

/** Records job ARGV[1] on an image already stored and lengthens both keys' expiry to ARGV[2] ms; 0 when the image is not stored. */
export const REFER_IMAGE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[2]) then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 1
`;

/** Stores the bytes ARGV[3] unless the image is there already, records job ARGV[1], lengthens both expiries to ARGV[2] ms. */
export const HOLD_IMAGE_LUA = `
redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[2]) then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 1
`;

/** Job ARGV[1] no longer refers to the image; with no job left, the image and its set are deleted (returns 1). */
export const RELEASE_IMAGE_LUA = `
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`;

/** The hashes of the images a job refers to, each once, in the order the job first names them. */
export function jobImageHashes(job: QueuedJobData): string[] {
  if (!isGenerationJob(job)) return [];
  const hashes = new Set<string>();
  for (const turn of job.messages) {
    for (const part of turn.parts ?? []) if (part.type === 'image') hashes.add(part.image.sha256);
  }
  return [...hashes];
}
