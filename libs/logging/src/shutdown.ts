/** Where a shutdown reports what it is doing, and which step overran. */
export interface ShutdownLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** One step of a process's shutdown, and the longest it may take. */
export interface ShutdownStep {
  name: string;
  run(): Promise<unknown>;
  deadlineMs: number;
}

/**
 * Runs a process's shutdown steps in order, each held to its deadline, then exits. A step that
 * overruns (closing a Redis connection while Redis is gone waits for a reconnect that never comes)
 * is logged and left behind: the process still exits, 0 when every step finished, 1 otherwise.
 * `exit` is process.exit in production; tests pass their own.
 */
export async function shutDown(
  steps: readonly ShutdownStep[],
  logger: ShutdownLogger,
  exit: (code: number) => void = (code) => process.exit(code),
): Promise<void> {
  let clean = true;
  for (const step of steps) {
    let timer: NodeJS.Timeout | undefined;
    const overran = new Promise<'overran'>((resolve) => {
      timer = setTimeout(() => resolve('overran'), step.deadlineMs);
      timer.unref();
    });
    const outcome = await Promise.race([
      step.run().then(
        () => 'done' as const,
        (err: Error) => err,
      ),
      overran,
    ]);
    clearTimeout(timer);
    if (outcome === 'done') continue;
    clean = false;
    logger.warn(
      outcome === 'overran'
        ? `Shutdown: ${step.name} did not finish within ${step.deadlineMs} ms; going on without it`
        : `Shutdown: ${step.name} failed: ${outcome.message}`,
    );
  }
  logger.log(clean ? 'Shutdown complete' : 'Shutdown done, with the steps above left unfinished');
  exit(clean ? 0 : 1);
}
