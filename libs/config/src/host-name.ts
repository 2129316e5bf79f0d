/** A DNS name or IPv4 address: letters, digits, `-` and `_` (compose service names) between dots. */
const NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;
const IPV6 = /^[0-9a-f:.]+$/;

/**
 * The host name in a `Host` header or an ALLOWED_HOSTS entry, in one form for comparing: lower case,
 * no port, no trailing dot, IPv6 addresses in brackets (`[::1]`). Null when it is not a host name at
 * all (a URL, a path, a space): such a Host matches nothing, and such an entry is a configuration error.
 */
export function hostName(value: string): string | null {
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    const port = host.slice(end + 1);
    if (end < 0 || !IPV6.test(host.slice(1, end)) || !/^(:\d{1,5})?$/.test(port)) return null;
    return host.slice(0, end + 1);
  }
  const colons = host.split(':').length - 1;
  // Two or more colons: an IPv6 address written without brackets (an entry; a Host header brackets it).
  if (colons > 1) return IPV6.test(host) ? `[${host}]` : null;
  if (colons === 1) {
    const [name, port] = host.split(':');
    if (!/^\d{1,5}$/.test(port!)) return null;
    host = name!;
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return NAME.test(host) ? host : null;
}
