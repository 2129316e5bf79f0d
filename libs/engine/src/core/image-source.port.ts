import type { ImageRef } from '@conveyor/queue';

/**
 * Where an engine gets the bytes of a job's images: jobs carry references (`ImageRef`), never images.
 * The worker reads them from Redis, where the API stored each image once.
 */
export abstract class ImageSource {
  /** The image's bytes; rejects when they are gone, with an error no retry can fix. */
  abstract read(ref: ImageRef): Promise<Buffer>;
}
