import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The key an admin request presents: `Bearer <key>` for scripts, or HTTP Basic
 * with the key as password (any user name), so a browser can prompt for it.
 */
export function presentedAdminKey(header: string | undefined): string | null {
  if (!header) return null;
  const space = header.indexOf(' ');
  if (space <= 0) return null;
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'bearer') return value || null;
  if (scheme !== 'basic') return null;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : null;
}

/** Compares digests in constant time, so the comparison leaks nothing about the key. */
export function isAdminKey(presented: string | null, adminKeySha256: string): boolean {
  const digest = createHash('sha256')
    .update(presented ?? '', 'utf8')
    .digest();
  return timingSafeEqual(digest, Buffer.from(adminKeySha256, 'hex')) && presented !== null;
}
