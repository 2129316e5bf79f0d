import type { DecodedImage } from '@conveyor/protocol';

/**
 * The images jobs refer to. A job carries references (hash, type, size), never the bytes: each image is
 * stored once by its hash, for as long as any job refers to it, however many requests carry it (a
 * conversation sends its images again with every turn).
 */
export abstract class ImageStore {
  /** Stores each image unless it is there already, and records `jobId` as referring to it: before the job is queued. */
  abstract hold(jobId: string, images: readonly DecodedImage[]): Promise<void>;
  /**
   * `jobId` no longer refers to these images (its job ended for good, or was withdrawn before a worker
   * took it); an image no job refers to any more is deleted. Releasing twice is harmless.
   */
  abstract release(jobId: string, sha256s: readonly string[]): Promise<void>;
}
