/** Request counters per API key and time window, shared by every API replica. */
export abstract class RateLimits {
  /** Counts one request in the key's window `window` (of `windowMs`) and returns the window's count. */
  abstract increment(keyName: string, window: number, windowMs: number): Promise<number>;
}
