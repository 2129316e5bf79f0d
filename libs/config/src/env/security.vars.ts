import type { EnvVarSpec } from './env-var.js';

export const SECURITY_VARS = {
  API_KEYS: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'comma-separated keys',
    meaning:
      'Keys clients send (`Authorization: Bearer <key>` on `/v1`), hashed on load. With none here or in the deployments file, authentication is off.',
  },
  ADMIN_KEY: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'a key',
    meaning:
      'The key of the queue dashboard at `/admin/queues`; without it (or `ADMIN_KEY_SHA256`) the dashboard is not served.',
  },
  ADMIN_KEY_SHA256: {
    kind: 'text',
    defaultText: 'none',
    allowedText: '64 hex digits (`npm run hash-key -- <key>`)',
    meaning: "The dashboard key's SHA-256 instead of the key itself; refused next to `ADMIN_KEY`.",
  },
  ALLOWED_HOSTS: {
    kind: 'text',
    defaultText: "`localhost`, `127.0.0.1`, `[::1]` and this machine's host name",
    allowedText: 'comma-separated host names or addresses (a port is ignored), or `*` for any',
    meaning:
      'The `Host` headers the API answers to; any other gets 403 (except on `/health` and `/ready`), so a page that rebinds its DNS name to 127.0.0.1 cannot reach the API. Set it to the names clients use, and behind a proxy to the name it forwards.',
  },
} as const satisfies Record<string, EnvVarSpec>;
