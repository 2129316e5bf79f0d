import type { LogLevel } from './config.types.js';

const ORDER = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;

/** The configured level and every more severe one, as Nest's logger takes them. */
export const enabledLogLevels = (level: LogLevel): (typeof ORDER)[number][] => ORDER.slice(0, ORDER.indexOf(level) + 1);
