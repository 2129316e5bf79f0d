import { describe, it, expect } from '@jest/globals';
import { shutDown } from './shutdown.js';

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: { log: (m: string) => lines.push(`log ${m}`), warn: (m: string) => lines.push(`warn ${m}`) },
  };
}

describe('shutDown', () => {
  it('runs every step in order and exits 0 when each finishes in time', async () => {
    const { lines, logger } = recorder();
    const ran: string[] = [];
    let code: number | null = null;
    await shutDown(
      [
        { name: 'drain', deadlineMs: 1000, run: async () => void ran.push('drain') },
        { name: 'close', deadlineMs: 1000, run: async () => void ran.push('close') },
      ],
      logger,
      (c) => (code = c),
    );
    expect(ran).toEqual(['drain', 'close']);
    expect(code).toBe(0);
    expect(lines).toEqual(['log Shutdown complete']);
  });

  it('goes on past a step that never finishes, names it, and exits 1 within its deadline', async () => {
    const { lines, logger } = recorder();
    const ran: string[] = [];
    let code: number | null = null;
    const started = Date.now();
    await shutDown(
      [
        { name: 'closing connections', deadlineMs: 200, run: () => new Promise(() => undefined) },
        { name: 'after', deadlineMs: 1000, run: async () => void ran.push('after') },
      ],
      logger,
      (c) => (code = c),
    );
    // It waited the step's deadline out, then went on: that it returned at all is the step given up on, since
    // the step never ends (how late a busy machine's timer fires is not asserted).
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(ran).toEqual(['after']);
    expect(code).toBe(1);
    expect(lines[0]).toBe('warn Shutdown: closing connections did not finish within 200 ms; going on without it');
  });

  it('reports a step that fails and still runs the rest', async () => {
    const { lines, logger } = recorder();
    let code: number | null = null;
    let after = false;
    await shutDown(
      [
        { name: 'close', deadlineMs: 1000, run: () => Promise.reject(new Error('connection reset')) },
        { name: 'after', deadlineMs: 1000, run: async () => void (after = true) },
      ],
      logger,
      (c) => (code = c),
    );
    expect(after).toBe(true);
    expect(code).toBe(1);
    expect(lines[0]).toBe('warn Shutdown: close failed: connection reset');
  });
});
