export { PinoNestLogger } from './pino-nest.logger.js';
export { shutDown, type ShutdownLogger, type ShutdownStep } from './shutdown.js';
