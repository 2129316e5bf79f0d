import { S3Client } from '@aws-sdk/client-s3';

export interface S3ClientSettings {
  endpoint: string | null;
  region: string | null;
  forcePathStyle: boolean;
}

/**
 * An S3 client that AWS S3, MinIO, Ceph RGW and R2 all answer. Credentials come from the SDK's own
 * chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, profiles, instance roles) unless given.
 */
export function createS3Client(
  settings: S3ClientSettings,
  credentials?: { accessKeyId: string; secretAccessKey: string },
): S3Client {
  return new S3Client({
    credentials,
    endpoint: settings.endpoint ?? undefined,
    region: settings.region ?? undefined,
    forcePathStyle: settings.forcePathStyle,
    // The SDK adds CRC32 checksums to every upload by default (streamed ones as aws-chunked trailers),
    // which not every S3-compatible store understands yet: send them only where the API requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
