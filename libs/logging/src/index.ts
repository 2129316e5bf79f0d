export { PinoNestLogger } from './pino-nest.logger.js';
