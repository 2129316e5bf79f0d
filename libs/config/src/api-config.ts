import { readAllowedHosts } from './allowed-hosts.js';
import type { PlatformConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';
import { readImageLimits } from './image-limits.js';

/** Where the API listens, what it accepts, and how long it waits. */
export function readApiConfig(r: EnvReader): PlatformConfig['api'] {
  const bodyLimitBytes = r.int('BODY_LIMIT_BYTES');
  const maxQueueDepth = r.int('MAX_QUEUE_DEPTH');
  return {
    host: r.string('HOST'),
    port: r.int('PORT'),
    bodyLimitBytes,
    requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS'),
    queueTimeoutMs: r.int('QUEUE_TIMEOUT_MS'),
    maxQueueDepth,
    // Flex waits behind every other tier: it is refused while the queue is half full, so the room left is the others'.
    flexQueueDepth: Math.min(maxQueueDepth, r.int('FLEX_QUEUE_DEPTH', Math.max(1, Math.floor(maxQueueDepth / 2)))),
    fairShares: r.bool('FAIR_SHARES'),
    shutdownGraceMs: r.int('API_SHUTDOWN_GRACE_MS'),
    allowedHosts: readAllowedHosts(r),
    bodyTimeoutMs: r.int('REQUEST_BODY_TIMEOUT_MS'),
    uploadTimeoutMs: r.int('UPLOAD_TIMEOUT_MS'),
    images: readImageLimits(r, bodyLimitBytes),
  };
}
