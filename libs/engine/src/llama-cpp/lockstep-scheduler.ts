/** One running generation as the scheduler drives it: each step evaluates one token. */
export interface Stepper {
  /** Position in every round: llama.cpp reuses its compute graph only while a batch keeps its sequences in order. */
  readonly order: number;
  /** Resolves false once the generation has finished; never rejects (a stepper ends itself on error). */
  step(): Promise<boolean>;
}

/**
 * Steps every running generation of one context together. All their next
 * tokens are queued in the same tick, so the NativeBatcher decodes them as one
 * batch, as llama.cpp's server does; left to themselves, sequences drift apart
 * and most decodes carry one or two tokens. A new generation's first step (its
 * prompt) runs on its own, so a long prompt never holds the others back for
 * more than the batch it shares with them.
 */
export class LockstepScheduler {
  private running: Stepper[] = [];
  private looping = false;

  start(stepper: Stepper): void {
    void safeStep(stepper).then((more) => {
      if (!more) return;
      this.running = [...this.running, stepper].sort((a, b) => a.order - b.order);
      if (!this.looping) void this.loop();
    });
  }

  /** Generations that have passed their prompt and step together. */
  get size(): number {
    return this.running.length;
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      while (this.running.length) {
        const round = this.running.map(async (stepper) => {
          if (!(await safeStep(stepper))) this.running = this.running.filter((s) => s !== stepper);
        });
        await Promise.all(round);
      }
    } finally {
      this.looping = false;
    }
  }
}

function safeStep(stepper: Stepper): Promise<boolean> {
  return stepper.step().catch(() => false);
}
