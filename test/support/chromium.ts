import { existsSync } from 'node:fs';

/**
 * Debian's Chromium, which `.ci/run` installs. Outside CI a machine without it
 * skips the browser tests (and says so); in CI its absence is a failure.
 */
export function chromiumPath(): string | null {
  const found = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p): p is string => !!p && existsSync(p),
  );
  if (found) return found;
  if (process.env.CI) throw new Error('Chromium is required in CI: apt-get install -y chromium (or set CHROMIUM_PATH)');
  console.warn('Chromium not found: skipping browser tests (apt-get install -y chromium, or set CHROMIUM_PATH)');
  return null;
}

/** Flags for a headless Chromium on a machine with no network beyond loopback. */
export const HEADLESS_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
