import type { EnvVarSpec } from './env-var.js';

/** Log levels from the most severe: each enables those before it. */
export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;

export const LOGGING_VARS = {
  LOG_LEVEL: {
    kind: 'enum',
    default: 'log',
    values: LOG_LEVELS,
    meaning: 'The least severe level logged; each level includes those before it.',
  },
  LOG_FORMAT: {
    kind: 'enum',
    default: 'json',
    values: ['json', 'text'],
    meaning:
      '`json`: one JSON object per line (pino), with `requestId` on every line about a request; `text`: readable console lines.',
  },
  LOG_PROMPTS: {
    kind: 'bool',
    default: false,
    meaning: 'Include prompts in logs. Keys are never logged.',
  },
} as const satisfies Record<string, EnvVarSpec>;
