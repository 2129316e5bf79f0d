import type { EnvVarSpec } from './env-var.js';

/** The AWS_ variables are those the AWS SDK reads too: declared so the reference lists them with the rest. */
export const FILES_VARS = {
  DATA_DIR: {
    kind: 'text',
    default: 'data',
    allowedText: 'a folder (relative to the working directory)',
    meaning: 'Uploaded files and batch results on local disk (without `FILE_STORE`), under `files/`.',
  },
  FILE_STORE: {
    kind: 'text',
    defaultText: 'local disk under `DATA_DIR/files`',
    allowedText: '`s3://<bucket>[/<prefix>]`',
    meaning:
      'Files in S3-compatible storage (AWS S3, MinIO, Ceph RGW, Cloudflare R2) that every API replica shares. An API whose Redis prefix already keeps its files in another store refuses to start.',
  },
  S3_FORCE_PATH_STYLE: {
    kind: 'bool',
    defaultText: '`true` with an endpoint URL, else `false`',
    meaning: 'Path-style requests (`<endpoint>/<bucket>/<key>`), as MinIO and Ceph RGW usually need.',
  },
  AWS_ENDPOINT_URL_S3: {
    kind: 'text',
    defaultText: '`AWS_ENDPOINT_URL`',
    allowedText: 'an `http://` or `https://` URL',
    meaning: "The S3 store's endpoint, for a store other than AWS S3.",
  },
  AWS_ENDPOINT_URL: {
    kind: 'text',
    defaultText: 'AWS S3',
    allowedText: 'an `http://` or `https://` URL',
    meaning: "The AWS SDK's endpoint for every service, S3 included, unless `AWS_ENDPOINT_URL_S3` is set.",
  },
  AWS_REGION: {
    kind: 'text',
    defaultText: '`AWS_DEFAULT_REGION`',
    allowedText: 'a region name such as `us-east-1`',
    meaning: "The S3 store's region.",
  },
  AWS_DEFAULT_REGION: {
    kind: 'text',
    defaultText: "`us-east-1` with an endpoint URL, else the SDK's own configuration",
    allowedText: 'a region name such as `us-east-1`',
    meaning: 'The region when `AWS_REGION` is not set.',
  },
  AWS_ACCESS_KEY_ID: {
    kind: 'text',
    defaultText: "the SDK's chain (profiles, an IAM role)",
    allowedText: 'a key id',
    meaning: "The S3 store's key id, read by the AWS SDK.",
  },
  AWS_SECRET_ACCESS_KEY: {
    kind: 'text',
    defaultText: "the SDK's chain (profiles, an IAM role)",
    allowedText: 'a secret key',
    meaning: "The S3 store's secret key, read by the AWS SDK.",
  },
} as const satisfies Record<string, EnvVarSpec>;
