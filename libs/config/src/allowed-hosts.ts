import { hostname } from 'node:os';
import type { AllowedHosts } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';
import { hostName } from './host-name.js';

/**
 * ALLOWED_HOSTS: comma-separated host names, or `*`. Unset: the loopback names and this machine's
 * own name, which is what a local server is addressed by; anything else must be named.
 */
export function readAllowedHosts(r: EnvReader): AllowedHosts {
  const raw = r.optionalString('ALLOWED_HOSTS');
  if (!raw) {
    const own = hostName(hostname());
    return [...new Set(['localhost', '127.0.0.1', '[::1]', ...(own ? [own] : [])])];
  }
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.includes('*')) return '*';
  const names: string[] = [];
  for (const entry of entries) {
    const name = hostName(entry);
    if (name) names.push(name);
    else
      r.problems.push(
        `ALLOWED_HOSTS entries are host names like api.example.com, 10.0.0.5 or [::1], or * (got "${entry}")`,
      );
  }
  return names;
}
