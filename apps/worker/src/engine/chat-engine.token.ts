/** Injection token for the loaded ChatEngine. */
export const CHAT_ENGINE = Symbol('CHAT_ENGINE');
/** Injection token for the DeploymentConfig this worker serves. */
export const SERVED_DEPLOYMENT = Symbol('SERVED_DEPLOYMENT');
