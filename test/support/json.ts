/**
 * A response's JSON body, typed as the shape the test expects it to have. The type checks nothing
 * at run time: the test's own assertions do, as they would on the untyped value.
 */
export async function readJson<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** `GET /ready`: whether every deployment has a live worker. */
export interface Readiness {
  status: 'ready' | 'not_ready' | 'draining';
  deployments: Record<string, { live_workers: number }>;
}
