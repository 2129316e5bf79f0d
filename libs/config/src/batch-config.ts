import type { PlatformConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';

/** How big a batch may be, and how the API replicas drive it; `dataDir` is DATA_DIR, resolved. */
export function readBatchConfig(r: EnvReader, dataDir: string): PlatformConfig['batch'] {
  return {
    dataDir,
    maxLines: r.int('BATCH_MAX_LINES'),
    maxFileBytes: r.int('BATCH_MAX_FILE_BYTES'),
    messageBatch: { maxRequests: r.int('MESSAGE_BATCH_MAX_REQUESTS'), maxBytes: r.int('MESSAGE_BATCH_MAX_BYTES') },
    inflightPerBatch: r.int('BATCH_INFLIGHT'),
    tickMs: r.int('BATCH_TICK_MS'),
    leaseMs: r.int('BATCH_LEASE_MS'),
    webhook: {
      timeoutMs: r.int('WEBHOOK_TIMEOUT_MS'),
      attempts: r.int('WEBHOOK_ATTEMPTS'),
      backoffMs: r.int('WEBHOOK_BACKOFF_MS'),
    },
    outputExpiryMinSeconds: r.int('BATCH_OUTPUT_EXPIRY_MIN_S'),
    expirySweepMs: r.int('FILE_EXPIRY_SWEEP_MS'),
  };
}
