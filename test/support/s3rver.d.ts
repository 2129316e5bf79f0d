// s3rver ships no types: the part of its API the tests use.
declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory?: string;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: Array<{ name: string; configs?: Array<string | Buffer> }>;
  }

  /** The part of a Koa context the tests' own middleware reads and writes. */
  interface S3rverContext {
    method: string;
    path: string;
    status: number;
    body: unknown;
    get(header: string): string;
    set(header: string, value: string): void;
  }

  export default class S3rver {
    constructor(options?: S3rverOptions);
    /** Koa's middleware, in the order requests go through it (s3rver is a Koa application). */
    middleware: Array<(ctx: S3rverContext, next: () => Promise<void>) => Promise<void>>;
    store: { existsObject(bucket: string, key: string): Promise<boolean> };
    /** Creates the configured buckets and listens; resolves to the address it listens on. */
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
