/** Why a generation was stopped, carried as the AbortSignal's reason. */
export const STOP = { cancelled: 'cancelled', shutdown: 'shutdown', lostLock: 'lost-lock' } as const;
export type StopReason = (typeof STOP)[keyof typeof STOP];

/**
 * The running generations and how each is stopped early: its client went away, the worker is
 * shutting down, or it lost a job's lock. The job handlers and the host depend on this port;
 * the adapter hears the API's cancels over Redis.
 */
export abstract class CancellationTracker {
  /** An AbortSignal that fires on a cancel for this request or when `linked` fires; its reason says why. */
  abstract track(requestId: string, linked?: AbortSignal): AbortSignal;
  /** Aborts a tracked request if its client cancelled before the job started, without delaying the job. */
  abstract abortIfCancelled(requestId: string): void;
  /** Stops every running generation, or those of `requestIds`, for `reason`. */
  abstract stop(reason: StopReason, requestIds?: readonly string[]): void;
  abstract untrack(requestId: string): void;
}
