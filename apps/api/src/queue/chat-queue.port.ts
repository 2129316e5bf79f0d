import type { ChatJobData } from '@conveyor/queue';

/** Where chat jobs go; the API depends on this, not on BullMQ. */
export abstract class ChatQueue {
  abstract enqueue(job: ChatJobData): Promise<void>;
  /** Best effort: drop the job if it is still waiting, and tell a worker running it to stop. */
  abstract cancel(deployment: string, requestId: string): Promise<void>;
}
