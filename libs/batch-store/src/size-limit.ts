import { FileTooLargeError } from './file-store.errors.js';

/** Counts the bytes of an upload as they go by, and stops it past the limit. */
export class SizeLimit {
  bytes = 0;
  exceeded = false;

  constructor(private readonly maxBytes: number) {}

  async *apply(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      this.bytes += buffer.length;
      if (this.bytes > this.maxBytes) {
        this.exceeded = true;
        throw new FileTooLargeError(this.maxBytes);
      }
      yield buffer;
    }
  }
}
