import { isGenerationJob, type QueuedJobData } from './embed-job.js';

/**
 * How an image's bytes stay in Redis exactly while jobs refer to them. Each image is stored once, under
 * `imageKey` (its hash), beside `imageJobsKey`, the set of jobs that refer to it. The API records a job
 * before queueing it; whoever sees the job end for good (the worker that finished it, or the API that
 * withdrew it before any worker took it) releases it, and the image goes with its last job. Both keys
 * also carry an expiry, which only ever lengthens: it clears what a process that died in between left.
 *
 * The scripts (in scripts/, the callers' connections define them by these names) are shared so that
 * the API and the workers cannot disagree on these steps.
 */
export const IMAGE_SCRIPTS = {
  refer: { name: 'referImage', file: new URL('./scripts/refer-image.lua', import.meta.url) },
  hold: { name: 'holdImage', file: new URL('./scripts/hold-image.lua', import.meta.url) },
  release: { name: 'releaseImage', file: new URL('./scripts/release-image.lua', import.meta.url) },
} as const;

/** The hashes of the images a job refers to, each once, in the order the job first names them. */
export function jobImageHashes(job: QueuedJobData): string[] {
  if (!isGenerationJob(job)) return [];
  const hashes = new Set<string>();
  for (const turn of job.messages) {
    for (const part of turn.parts ?? []) if (part.type === 'image') hashes.add(part.image.sha256);
  }
  return [...hashes];
}
