import { createHash } from 'node:crypto';

/**
 * A reasoning item's `encrypted_content`, for clients that keep no state on the server (`store: false`
 * with `include: ["reasoning.encrypted_content"]`) and send reasoning back as input. It is not
 * encrypted: a version prefix, the reasoning's text in base64url and a checksum of it, which this
 * server checks when the item comes back. It carries nothing the client was not already sent.
 */
const PREFIX = 'cvr1.';
const B64URL = /^[A-Za-z0-9_-]*$/;

const checksum = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 16);

export const encodeReasoning = (text: string): string =>
  `${PREFIX}${Buffer.from(text, 'utf8').toString('base64url')}.${checksum(text)}`;

/** The reasoning text an `encrypted_content` made here holds, or null when this server did not make it (or it was altered). */
export function decodeReasoning(content: string): string | null {
  if (!content.startsWith(PREFIX)) return null;
  const [body, sum, ...rest] = content.slice(PREFIX.length).split('.');
  if (body === undefined || sum === undefined || rest.length || !B64URL.test(body)) return null;
  const text = Buffer.from(body, 'base64url').toString('utf8');
  return encodeReasoning(text) === content ? text : null;
}
