/** The part of the BullMQ worker on the deployment's queue that the gate steers. */
export interface SharedIntake {
  /** Jobs it runs at once: it fetches a job only while it runs fewer. */
  concurrency: number;
  /** Makes it look at `concurrency` again now, rather than when one of its jobs ends. */
  wake(): void;
}

/**
 * Shares one deployment's sequences between its two intakes: the deployment's queue, which every
 * worker takes from, and this worker's own queue of jobs routed to it. The deployment's queue is
 * taken from only while sequences are free of routed jobs, so this worker never holds a job from it
 * that another worker could run sooner; a routed job that finds no free sequence is not kept either
 * (the caller sends it on to the deployment's queue). Every change reports the free count.
 */
export class SlotGate {
  private shared = 0;
  private routed = 0;

  constructor(
    readonly size: number,
    private readonly intake: SharedIntake,
    private readonly report: (free: number) => void,
  ) {
    this.adjust();
  }

  get free(): number {
    return Math.max(0, this.size - this.shared - this.routed);
  }

  /** A job from the deployment's queue starts (BullMQ already limits how many by `concurrency`). */
  enterShared(): void {
    this.shared++;
    this.adjust();
  }

  leaveShared(): void {
    this.shared--;
    this.adjust();
  }

  /** A routed job asks for a sequence: false when none is free, and then it is not counted. */
  enterRouted(): boolean {
    if (this.free === 0) return false;
    this.routed++;
    this.adjust();
    return true;
  }

  leaveRouted(): void {
    this.routed--;
    this.adjust();
  }

  private adjust(): void {
    // BullMQ takes at least one at a time: with every sequence routed, one job may still come in and wait.
    const limit = Math.max(1, this.size - this.routed);
    if (limit !== this.intake.concurrency) {
      const raised = limit > this.intake.concurrency;
      this.intake.concurrency = limit;
      if (raised) this.intake.wake();
    }
    this.report(this.free);
  }
}
