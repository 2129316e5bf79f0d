import { createServer } from 'node:net';

/** What to tell an operator when the API cannot listen where it was told to; null for other errors. */
export function listenProblem(
  err: NodeJS.ErrnoException,
  { host, port }: { host: string; port: number },
): string | null {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE')
    return `Port ${port} is already in use on ${host} (another process listens there): stop it, or choose another port with PORT=<port>.`;
  if (err.code === 'EACCES')
    return `Not allowed to listen on ${where} (ports below 1024 need privileges): choose another port with PORT=<port>.`;
  if (err.code === 'EADDRNOTAVAIL')
    return `Cannot listen on ${where}: no network interface has that address; set HOST to one of this machine's addresses, or 0.0.0.0.`;
  return null;
}

/**
 * Fails with `listenProblem`'s message when nothing can listen at host:port, before the app is built:
 * Nest logs a failed listen as an error of its own, and the API would connect to Redis for nothing.
 * A port taken in between is still reported by the listen itself.
 */
export async function assertCanListen(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((ok, fail) => {
      probe.once('error', fail);
      probe.listen(port, host, ok);
    });
  } catch (err) {
    throw new ListenProblem(listenProblem(err as NodeJS.ErrnoException, { host, port }) ?? (err as Error).message);
  } finally {
    await new Promise((done) => probe.close(done));
  }
}

/** The API cannot listen where it was told to; the message says what to do. */
export class ListenProblem extends Error {}
