import type { EnvVarSpec } from './env-var.js';

export const SERVER_VARS = {
  HOST: {
    kind: 'text',
    default: '0.0.0.0',
    allowedText: 'an address of this machine',
    meaning: 'The address the API listens on.',
  },
  PORT: {
    kind: 'int',
    default: 8000,
    min: 0,
    max: 65535,
    meaning: 'The port the API listens on (`0`: any free port).',
  },
  REQUEST_TIMEOUT_MS: {
    kind: 'int',
    default: 10 * 60 * 1000,
    min: 100,
    max: 24 * 60 * 60 * 1000,
    meaning: 'Deadline of one request, from its arrival to the end of its reply.',
  },
  QUEUE_TIMEOUT_MS: {
    kind: 'int',
    default: 5 * 60 * 1000,
    min: 100,
    max: 24 * 60 * 60 * 1000,
    meaning:
      'How long a request waits for a worker to take it before it fails with 503: a deployment with no live worker keeps its requests this long (a cold start).',
  },
  REQUEST_BODY_TIMEOUT_MS: {
    kind: 'int',
    default: 30_000,
    min: 100,
    max: 60 * 60_000,
    meaning:
      "How long a client may take to send a request's headers, and then as long for its body; past it the connection is closed with 408. Replies are not limited by it.",
  },
  UPLOAD_TIMEOUT_MS: {
    kind: 'int',
    default: 10 * 60_000,
    min: 1000,
    max: 24 * 60 * 60_000,
    meaning:
      "The deadline of a file upload's body (`POST /v1/files`) and of a message batch's (`POST /v1/messages/batches`), in place of `REQUEST_BODY_TIMEOUT_MS`: 10 minutes carry a 200 MB file over a link of about 2.7 Mbit/s.",
  },
  API_SHUTDOWN_GRACE_MS: {
    kind: 'int',
    default: 10_000,
    min: 0,
    max: 60 * 60_000,
    meaning: 'After SIGTERM, how long open replies may take to finish before they end with an error event.',
  },
} as const satisfies Record<string, EnvVarSpec>;
