/**
 * Resolves once `probe` succeeds, retrying while its connection is still opening. A repository's
 * command connection refuses commands until it is ready (no offline queue, so that a client request
 * fails at once while Redis is away); a test that uses one right after creating it must wait for it,
 * or its first commands fail with "Stream isn't writeable" on a slow machine.
 */
export async function untilConnected(probe: () => Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      await probe();
      return;
    } catch (err) {
      if (!/isn't writeable|Connection is closed|ECONNREFUSED/.test((err as Error).message) || Date.now() > end)
        throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
