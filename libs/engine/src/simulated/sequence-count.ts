/**
 * A simulated engine's sequences: a request takes one per choice, and waits, first come first served,
 * while too few are free (the worker's job concurrency already keeps one choice per job within them).
 */
export class SequenceCount {
  private free: number;
  private readonly waiting: Array<{ count: number; resume: () => void }> = [];

  constructor(total: number) {
    this.free = total;
  }

  async acquire(count: number): Promise<void> {
    if (!this.waiting.length && this.free >= count) {
      this.free -= count;
      return;
    }
    await new Promise<void>((resume) => this.waiting.push({ count, resume }));
  }

  release(count: number): void {
    this.free += count;
    while (this.waiting.length && this.free >= this.waiting[0]!.count) {
      const next = this.waiting.shift()!;
      this.free -= next.count;
      next.resume();
    }
  }
}
