import type { HeldPromptChange } from '@conveyor/engine';

/**
 * What this worker tells the API so it can route requests by prompt: which prompt beginnings its
 * sequences hold, and how many sequences are free. Job handlers and the slot gate depend on this
 * port; the Redis adapter implements it.
 */
export abstract class PrefixRoutes {
  /** This worker's name in queue and key names (its id, made safe for them). */
  abstract readonly worker: string;
  /**
   * The sequences a reply ran on now hold what `chains` describe (one chain of prompt block hashes
   * per sequence, in the same order); what they held before is gone.
   */
  abstract held(deployment: string, sequences: readonly number[], chains: readonly (readonly string[])[]): void;
  /**
   * The engine kept what a sequence held beyond it (its prompt cache in host memory), as an entry, before
   * a request cut the sequence's cells; or dropped such an entry. A kept entry stays announced, with the
   * chain its sequence had, until dropped: a request that begins with it is still best served here.
   */
  abstract heldApart(deployment: string, change: HeldPromptChange): void;
  /** How many of the deployment's sequences are free for a job routed here. */
  abstract free(deployment: string, count: number): void;
}
