import type { EnvVarSpec } from './env-var.js';

/** The image bytes a request may carry when the body limit leaves room for them: 10 MiB. */
export const IMAGE_MAX_BYTES_DEFAULT = 10 * 1024 * 1024;

export const LIMITS_VARS = {
  MAX_QUEUE_DEPTH: {
    kind: 'int',
    default: 1000,
    min: 1,
    max: 10_000_000,
    meaning: 'Interactive requests waiting per deployment before new ones get 429.',
  },
  FLEX_QUEUE_DEPTH: {
    kind: 'int',
    min: 1,
    max: 10_000_000,
    defaultText: 'half of `MAX_QUEUE_DEPTH`',
    meaning:
      'Requests waiting per deployment before new `service_tier: flex` ones get 429 `resource_unavailable`; never more than `MAX_QUEUE_DEPTH`.',
  },
  FAIR_SHARES: {
    kind: 'bool',
    default: true,
    meaning:
      "Share each deployment between API keys by their `weight`: batch lines in flight, and the last places in the queue. Off: batches share it per batch, and the queue's places go first come, first served.",
  },
  BODY_LIMIT_BYTES: {
    kind: 'int',
    default: 16 * 1024 * 1024,
    min: 1024,
    max: 1024 * 1024 * 1024,
    meaning:
      "The largest request body accepted. An image's base64 takes 4/3 of its bytes in it: raise it with `IMAGE_MAX_BYTES`.",
  },
  IMAGE_MAX_BYTES: {
    kind: 'int',
    min: 1,
    max: 1024 * 1024 * 1024,
    defaultText: `\`${IMAGE_MAX_BYTES_DEFAULT}\` (10 MiB), and never more than 3/4 of \`BODY_LIMIT_BYTES\``,
    meaning:
      'Bytes of one image, decoded; over it, 413 `image_too_large`. A value the body limit could not carry stops start-up, naming both.',
  },
  IMAGE_MAX_PIXELS: {
    kind: 'int',
    default: 7680 * 4320,
    min: 1,
    max: 1 << 30,
    meaning:
      'Pixels of one image (7680×4320, 8K UHD, by default), read from its header; over it, 400 `image_too_large`. A worker decodes an image into 4 bytes a pixel.',
  },
  IMAGE_MAX_COUNT: {
    kind: 'int',
    default: 8,
    min: 0,
    max: 1024,
    meaning: 'Images in one request; each takes hundreds to thousands of tokens of the context.',
  },
} as const satisfies Record<string, EnvVarSpec>;
