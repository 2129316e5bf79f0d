import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('keeps files on local disk under DATA_DIR/files unless FILE_STORE names a bucket', () => {
    expect(loadConfig({}).fileStore).toEqual({ kind: 'local', dir: resolve('data', 'files') });
    expect(loadConfig({ DATA_DIR: '/var/conveyor' }).fileStore).toEqual({ kind: 'local', dir: '/var/conveyor/files' });
  });

  it('reads an s3:// FILE_STORE, with the endpoint, region and path style of the AWS variables', () => {
    expect(loadConfig({ FILE_STORE: 's3://my-bucket/conveyor/prod/', AWS_REGION: 'eu-west-1' }).fileStore).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'conveyor/prod',
      endpoint: null,
      region: 'eu-west-1',
      forcePathStyle: false,
    });
    // Another store: path-style and us-east-1 unless told otherwise.
    expect(
      loadConfig({ FILE_STORE: 's3://files', AWS_ENDPOINT_URL: 'http://minio:9000', AWS_DEFAULT_REGION: '' }).fileStore,
    ).toEqual({
      kind: 's3',
      bucket: 'files',
      prefix: '',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    expect(
      loadConfig({
        FILE_STORE: 's3://files/x',
        AWS_ENDPOINT_URL: 'http://ignored:1',
        AWS_ENDPOINT_URL_S3: 'https://account.r2.cloudflarestorage.com',
        AWS_DEFAULT_REGION: 'auto',
        S3_FORCE_PATH_STYLE: 'false',
      }).fileStore,
    ).toMatchObject({ endpoint: 'https://account.r2.cloudflarestorage.com', region: 'auto', forcePathStyle: false });
  });

  it.each([
    ['FILE_STORE', 'minio://bucket/x'],
    ['FILE_STORE', '/var/files'],
    ['FILE_STORE', 's3://'],
    ['FILE_STORE', 's3://Upper_Case/x'],
    ['FILE_STORE', 's3://bucket//x'],
    ['FILE_STORE', 's3://bucket/a/../b'],
    ['FILE_STORE', 's3://bucket/with space'],
    ['AWS_ENDPOINT_URL', 'minio:9000'],
    ['AWS_REGION', 'eu west'],
    ['S3_FORCE_PATH_STYLE', 'maybe'],
  ])('refuses %s=%s for a file store in S3', (name, value) => {
    const error = configError({ FILE_STORE: 's3://bucket/prefix', [name]: value });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(name);
    expect(error.problems[0]).toContain(`"${value}"`);
  });
});
