import type { FileStoreConfig } from '@conveyor/config';
import type { FileStore } from './file-store.js';
import { LocalFileStore } from './local-file.store.js';

/**
 * The file store the configuration names. The S3 store's modules (the AWS SDK) load only when it is
 * configured: the SDK is large, and on Node 20 it prints a support notice into the logs of every process.
 */
export async function createFileStore(config: FileStoreConfig): Promise<FileStore> {
  if (config.kind === 'local') return new LocalFileStore(config.dir);
  const [{ createS3Client }, { S3FileStore }] = await Promise.all([
    import('./s3-client.js'),
    import('./s3-file.store.js'),
  ]);
  return new S3FileStore(createS3Client(config), { bucket: config.bucket, prefix: config.prefix });
}
