import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { createS3Client } from '../../libs/batch-store/src/s3-client.js';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** s3rver's built-in account: it checks request signatures against these. */
const ACCESS_KEY = 'S3RVER';

/**
 * `PUT` with `If-None-Match: *` (write only if absent), which AWS S3, MinIO and R2 honour and s3rver
 * 3 ignores: answered here as they answer it, 412 when the object exists or another such write of it
 * is under way, so that stores racing to create an object are tested as they run on real ones.
 */
function emulateConditionalPuts(server: S3rver): void {
  const writing = new Set<string>();
  server.middleware.unshift(async (ctx, next) => {
    if (ctx.method !== 'PUT' || ctx.get('if-none-match') !== '*') return next();
    const [bucket, ...key] = ctx.path.slice(1).split('/').map(decodeURIComponent);
    const path = `${bucket}/${key.join('/')}`;
    const refuse = () => {
      ctx.status = 412;
      ctx.set('Content-Type', 'application/xml');
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code></Error>';
    };
    if (writing.has(path)) return refuse();
    // Marked before the first await: a second conditional write arriving meanwhile is refused, as on a real store.
    writing.add(path);
    try {
      if (await server.store.existsObject(bucket, key.join('/'))) return refuse();
      await next();
    } finally {
      writing.delete(path);
    }
  });
}

/**
 * An S3-compatible server of the test's own, in this process, on loopback, with one bucket, keeping
 * its objects in a scratch folder. The API's processes reach it through the standard AWS variables.
 */
export class TestS3 {
  static readonly bucket = 'test';

  private constructor(
    private readonly server: S3rver,
    private readonly dir: string,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<TestS3> {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-s3-'));
    const server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: dir,
      configureBuckets: [{ name: TestS3.bucket }],
    });
    emulateConditionalPuts(server);
    const { port } = await server.run();
    return new TestS3(server, dir, `http://127.0.0.1:${port}`);
  }

  /** The environment that points an API process's file store at `s3://test/<prefix>`. */
  env(prefix: string): Record<string, string> {
    return {
      FILE_STORE: `s3://${TestS3.bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: this.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: ACCESS_KEY,
    };
  }

  /** A client as the platform makes one, with s3rver's credentials. */
  client(): S3Client {
    return createS3Client(
      { endpoint: this.endpoint, region: 'us-east-1', forcePathStyle: true },
      { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY },
    );
  }

  /** The keys of the bucket's objects under `prefix`. */
  async keys(prefix: string): Promise<string[]> {
    const client = this.client();
    try {
      const page = await client.send(new ListObjectsV2Command({ Bucket: TestS3.bucket, Prefix: prefix }));
      return (page.Contents ?? []).map((o) => o.Key ?? '');
    } finally {
      client.destroy();
    }
  }

  async stop(): Promise<void> {
    await this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
