import { join } from 'node:path';
import type { FileStoreConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';

/** S3's bucket naming rules, which MinIO, Ceph RGW and R2 share. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Key prefixes: path segments of characters every S3-compatible store takes without escaping. */
const PREFIX = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;
const REGION = /^[A-Za-z0-9-]{1,64}$/;

/**
 * FILE_STORE: unset keeps files on local disk under DATA_DIR/files; `s3://bucket/prefix` in
 * S3-compatible storage, reached through the AWS SDK's standard variables (AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION, and its credential chain).
 */
export function readFileStoreConfig(r: EnvReader, dataDir: string): FileStoreConfig {
  // Read whatever the store, so a typo in it is reported before it matters.
  const pathStyle = r.optionalString('S3_FORCE_PATH_STYLE');
  const forced = pathStyle === undefined ? undefined : r.bool('S3_FORCE_PATH_STYLE', false);
  const raw = r.optionalString('FILE_STORE');
  if (!raw) return { kind: 'local', dir: join(dataDir, 'files') };

  const match = /^s3:\/\/([^/]*)\/?(.*)$/.exec(raw);
  const bucket = match?.[1] ?? '';
  const prefix = (match?.[2] ?? '').replace(/\/+$/, '');
  const segments = prefix.split('/');
  if (
    !match ||
    !BUCKET.test(bucket) ||
    (prefix !== '' && (!PREFIX.test(prefix) || segments.includes('.') || segments.includes('..')))
  ) {
    r.problems.push(
      `FILE_STORE must be s3://<bucket>[/<prefix>] (a bucket of 3-63 lowercase letters, digits, '.' or '-'; ` +
        `a prefix of letters, digits, '.', '_', '-' and '/'), or unset for local disk (got "${raw}")`,
    );
  }

  const endpointVar = r.optionalString('AWS_ENDPOINT_URL_S3') ? 'AWS_ENDPOINT_URL_S3' : 'AWS_ENDPOINT_URL';
  const endpoint = r.optionalString(endpointVar) ?? null;
  if (endpoint !== null && !/^https?:\/\/[^/\s]+(\/\S*)?$/.test(endpoint)) {
    r.problems.push(`${endpointVar} must be an http:// or https:// URL (got "${endpoint}")`);
  }
  const regionVar = r.optionalString('AWS_REGION') ? 'AWS_REGION' : 'AWS_DEFAULT_REGION';
  // S3-compatible stores take any region name; us-east-1 is the one they all accept.
  const region = r.optionalString(regionVar) ?? (endpoint !== null ? 'us-east-1' : null);
  if (region !== null && !REGION.test(region)) {
    r.problems.push(`${regionVar} must be a region name such as us-east-1 (got "${region}")`);
  }
  return { kind: 's3', bucket, prefix, endpoint, region, forcePathStyle: forced ?? endpoint !== null };
}
