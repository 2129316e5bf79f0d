/**
 * Releases the images of a job that ended for good: the job no longer refers to them, and an image no
 * job refers to any more is deleted (see `jobImageHashes` and the scripts beside it in the queue
 * contracts). The job handlers depend on this port; the adapter runs the shared script on Redis.
 */
export abstract class ImageReleaser {
  /** Releasing twice, or a job with no images, is harmless. */
  abstract release(jobId: string, sha256s: readonly string[]): Promise<void>;
}
