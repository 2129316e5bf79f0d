import type { LoggerService } from '@nestjs/common';
import { pino, type Logger, type Level } from 'pino';

const LEVEL: Record<string, Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * Nest's logger interface over pino: one JSON object per line. A message
 * given as an object keeps its fields (requestId, deployment, …) as
 * top-level keys, so log pipelines can follow a request from API to worker.
 */
export class PinoNestLogger implements LoggerService {
  private readonly pino: Logger;

  constructor(service: 'api' | 'worker', level: string) {
    this.pino = pino({
      base: { service, pid: process.pid },
      level: LEVEL[level] ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
    });
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) {
      const { msg, ...fields } = message as Record<string, unknown>;
      this.pino[level]({ context, ...fields }, String(msg ?? ''));
    } else if (message instanceof Error) {
      this.pino[level]({ context, err: message }, message.message);
    } else {
      // Nest passes an error's stack as the second argument of error().
      const stack = level === 'error' && rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
      this.pino[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
}
