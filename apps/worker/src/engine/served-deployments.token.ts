/** Injection token for the deployments this worker process serves. */
export const SERVED_DEPLOYMENTS = Symbol('SERVED_DEPLOYMENTS');
