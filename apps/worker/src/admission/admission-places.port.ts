/**
 * The places requests hold in their deployment's queue (the API's depth limit): a request holds one from
 * its admission until a worker takes its job. The worker side of it: a job taken gives its place back,
 * and a job a dead worker had taken, back to waiting, holds one again.
 */
export abstract class AdmissionPlaces {
  /** A worker has taken the job of `requestId`: its request no longer waits. Giving back twice is harmless. */
  abstract taken(deployment: string, requestId: string): Promise<void>;
  /** Jobs taken back from a dead worker to wait again: their requests wait, as when admitted. */
  abstract waitAgain(deployment: string, requestIds: readonly string[]): Promise<void>;
}
