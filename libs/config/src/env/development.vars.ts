import type { EnvVarSpec } from './env-var.js';

export const DEVELOPMENT_VARS = {
  CI: {
    kind: 'text',
    defaultText: 'unset',
    allowedText: 'any value',
    meaning:
      'Set: a test whose tool is missing (Chromium, Prometheus, llama-server, the Python client) fails instead of being skipped.',
  },
  CHROMIUM_PATH: {
    kind: 'text',
    defaultText: '`/usr/bin/chromium`, then `/usr/bin/chromium-browser`',
    allowedText: 'an executable',
    meaning: 'The Chromium the browser tests drive.',
  },
  PROMETHEUS_PATH: {
    kind: 'text',
    defaultText: '`/usr/bin/prometheus`',
    allowedText: 'an executable',
    meaning: "The Prometheus the dashboard test runs every panel's query on.",
  },
} as const satisfies Record<string, EnvVarSpec>;
