import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { PeriodicPass } from './periodic-pass.js';

/** A promise and the function that settles it, for a pass that ends when the test says. */
function gate(): { done: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

describe('PeriodicPass', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('runs the pass at each interval, and skips a due one while the last still runs', async () => {
    const gates: Array<ReturnType<typeof gate>> = [];
    const periodic = new PeriodicPass(
      () => {
        const g = gate();
        gates.push(g);
        return g.done;
      },
      () => undefined,
    );
    periodic.start(100);
    await jest.advanceTimersByTimeAsync(99);
    expect(gates).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(gates).toHaveLength(1);
    // Three more intervals go by while the first pass runs: none starts beside it.
    await jest.advanceTimersByTimeAsync(300);
    expect(gates).toHaveLength(1);
    gates[0]!.open();
    await jest.advanceTimersByTimeAsync(100);
    expect(gates).toHaveLength(2);
    gates[1]!.open();
    await periodic.stop();
  });

  it('hands a failed pass to its handler and goes on', async () => {
    const failures: string[] = [];
    let passes = 0;
    const periodic = new PeriodicPass(
      () => (++passes === 1 ? Promise.reject(new Error('Redis away')) : Promise.resolve()),
      (err) => failures.push(err.message),
    );
    periodic.start(50);
    await jest.advanceTimersByTimeAsync(100);
    expect(failures).toEqual(['Redis away']);
    expect(passes).toBe(2);
    await periodic.stop();
  });

  it('stop waits for the pass under way, and no pass starts after it', async () => {
    const g = gate();
    let passes = 0;
    const periodic = new PeriodicPass(
      () => {
        passes++;
        return g.done;
      },
      () => undefined,
    );
    periodic.start(10);
    await jest.advanceTimersByTimeAsync(10);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(50);
    expect(stopped).toBe(false);
    g.open();
    await stopping;
    expect(stopped).toBe(true);
    await jest.advanceTimersByTimeAsync(50);
    expect(passes).toBe(1);
  });

  it('never keeps the process alive by itself', async () => {
    const periodic = new PeriodicPass(
      () => Promise.resolve(),
      () => undefined,
    );
    jest.useRealTimers();
    const spy = jest.spyOn(global, 'setInterval');
    periodic.start(60_000);
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
    await periodic.stop();
  });
});
