import type { EnvVarSpec } from './env-var.js';

export const BATCHES_VARS = {
  BATCH_MAX_LINES: {
    kind: 'int',
    default: 50_000,
    min: 1,
    max: 10_000_000,
    meaning: "Requests in one batch's input file.",
  },
  BATCH_MAX_FILE_BYTES: {
    kind: 'int',
    default: 200 * 1024 * 1024,
    min: 1024,
    max: 10 * 1024 * 1024 * 1024,
    meaning: 'Bytes of one uploaded file (`POST /v1/files`), a batch input or any other.',
  },
  BATCH_INFLIGHT: {
    kind: 'int',
    default: 16,
    min: 1,
    max: 10_000,
    meaning:
      "The fewest lines of one batch queued or running at once. A batch keeps twice its deployment's live sequences (workers × `PARALLEL`) in flight when that is more, so adding workers speeds up a single batch.",
  },
  BATCH_TICK_MS: {
    kind: 'int',
    default: 100,
    min: 10,
    max: 60_000,
    meaning: 'How often the API replica driving a batch collects its results and queues more of its lines.',
  },
  BATCH_LEASE_MS: {
    kind: 'int',
    default: 5000,
    min: 200,
    max: 10 * 60_000,
    meaning:
      'How long the API replica driving a batch holds it without renewing: another replica takes the batch over this long after its driver dies.',
  },
} as const satisfies Record<string, EnvVarSpec>;
