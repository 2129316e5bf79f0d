import type { ChatJobData, QueuedJobData } from '@conveyor/queue';

/** Where generation and embedding jobs go; the API depends on this, not on BullMQ. */
export abstract class ChatQueue {
  abstract enqueue(job: QueuedJobData): Promise<void>;
  /** Best effort: drop the job if it is still waiting, and tell a worker running it to stop. */
  abstract cancel(deployment: string, requestId: string): Promise<void>;
  /** A request's job if BullMQ still has it (running, or finished within its retention). */
  abstract find(requestId: string): Promise<ChatJobData | null>;
  /** Jobs of a deployment by state: interactive waiting, batch lines waiting (prioritized), running. */
  abstract counts(deployment: string): Promise<{ waiting: number; prioritized: number; active: number }>;
  /** Interactive requests waiting for a worker (batch lines not counted). */
  abstract waiting(deployment: string): Promise<number>;
  /** Takes the job back if no worker has started it; false when one has (or it is gone). */
  abstract withdraw(deployment: string, requestId: string): Promise<boolean>;
}
