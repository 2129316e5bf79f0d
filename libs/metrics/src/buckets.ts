/**
 * Histogram buckets wide enough for a small model on a CPU (seconds to minutes per reply) and a GPU
 * fleet (milliseconds per token): the bounds vLLM serves, extended downwards where a GPU's figures fall
 * below them, so dashboards written for vLLM read the same ranges here.
 */

/** Time to a reply's first token, and time in the queue: vLLM's first-token bounds, 1 ms to 43 min. */
export const FIRST_TOKEN_SECONDS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
] as const;

/** Time between two tokens of a reply: vLLM's bounds from 10 ms, with 1 to 5 ms below them for GPUs. */
export const TOKEN_SECONDS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
] as const;

/** A whole request: vLLM's end-to-end bounds from 0.3 s, with 10 to 100 ms below them for short replies. */
export const REQUEST_SECONDS = [
  0.01, 0.025, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
] as const;

/** The platform's own latency histograms, from before the bounds above. */
export const PLATFORM_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;

/** Tokens per second of one reply. */
export const TOKENS_PER_SECOND = [1, 5, 10, 25, 50, 100, 200, 400, 800, 1600] as const;
