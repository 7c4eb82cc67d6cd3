/** Where executors and hubs log: the worker's logger, plus `info` for sessions and counts. */
import { z } from 'zod';
import type { WorkerLogger } from '../options.js';

/** A `WorkerLogger` that also takes informational lines (sessions opened, startup counts, passes). */
export interface ExecutorLogger extends WorkerLogger {
  info(message: string, details: Record<string, unknown>): void;
}

/** A logger with warn, error and info functions. */
export const loggerSchema = z.custom<ExecutorLogger>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['warn', 'error', 'info'].every((key) => typeof (value as Record<string, unknown>)[key] === 'function'),
  'must have info, warn and error functions',
);

/** Log to the console under `prefix`. */
export function consoleExecutorLogger(prefix: string): ExecutorLogger {
  return {
    info: (message, details) => console.info(`${prefix}: ${message}`, details),
    warn: (message, details) => console.warn(`${prefix}: ${message}`, details),
    error: (message, details) => console.error(`${prefix}: ${message}`, details),
  };
}
