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
  MESSAGE_BATCH_MAX_REQUESTS: {
    kind: 'int',
    default: 100_000,
    min: 1,
    max: 10_000_000,
    meaning: "Requests in one message batch (`POST /v1/messages/batches`); Anthropic's limit is 100,000.",
  },
  MESSAGE_BATCH_MAX_BYTES: {
    kind: 'int',
    default: 256 * 1000 * 1000,
    min: 1024,
    max: 10 * 1024 * 1024 * 1024,
    meaning:
      "Bytes of one message batch's body, read as a stream (not bound by `BODY_LIMIT_BYTES`); Anthropic's limit is 256 MB.",
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
  WEBHOOK_TIMEOUT_MS: {
    kind: 'int',
    default: 10_000,
    min: 100,
    max: 120_000,
    meaning:
      "How long one delivery of a batch event to a key's webhook may take: a receiver that has not answered by then counts as a failed attempt.",
  },
  WEBHOOK_ATTEMPTS: {
    kind: 'int',
    default: 10,
    min: 1,
    max: 50,
    meaning:
      'Deliveries of one batch event tried before it is given up: the first, then retries after a failure (no answer in time, a refused connection, a status other than 2xx).',
  },
  WEBHOOK_BACKOFF_MS: {
    kind: 'int',
    default: 2000,
    min: 10,
    max: 10 * 60_000,
    meaning:
      'The wait before the first retry of a batch event; each later one waits twice the one before, so with the defaults an event is retried for about 17 minutes.',
  },
  BATCH_OUTPUT_EXPIRY_MIN_S: {
    kind: 'int',
    default: 3600,
    min: 1,
    max: 2_592_000,
    meaning:
      "The shortest `output_expires_after.seconds` a batch (or `expires_after.seconds` an upload) may ask for. OpenAI's is 3600: a lower value is for tests only, which make a file expire within seconds.",
  },
  FILE_EXPIRY_SWEEP_MS: {
    kind: 'int',
    default: 60_000,
    min: 50,
    max: 24 * 3600_000,
    meaning:
      'How often each API replica removes the files past their `expires_at` from the file store. An expired file answers 404 at once, removed or not.',
  },
} as const satisfies Record<string, EnvVarSpec>;
