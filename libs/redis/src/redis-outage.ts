/**
 * Whether an error says Redis cannot be reached right now (down, restarting, failing over, or a cluster
 * without a primary for a slot), as opposed to a command Redis answered with an error. Every route maps
 * such an error to one answer (503 with Retry-After), wherever it was thrown: a Redis outage is the
 * platform's to wait out, never a server error of the route's.
 */
export function isRedisOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError' || err.name === 'ClusterAllFailedError') return true;
  return OUTAGE_MESSAGES.some((pattern) => pattern.test(err.message));
}

/** What ioredis and Redis say while Redis is out of reach; a ReplyError to a command is not among them. */
const OUTAGE_MESSAGES = [
  /Connection is closed/,
  /Stream isn't writeable/,
  /enableOfflineQueue/,
  /max retries per request/i,
  /\bECONNREFUSED\b|\bECONNRESET\b|\bETIMEDOUT\b|\bEPIPE\b/,
  /^(LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/,
  /Failed to refresh slots cache/,
  /None of startup nodes is available/,
];
