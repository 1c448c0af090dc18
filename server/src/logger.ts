import { destination, pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stdout. Writes are asynchronous: a synchronous write per request line costs a
 * system call on the response path (measured in the speed bench). `main.ts` flushes on shutdown.
 */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'mnemo' } }, destination({ dest: 1, sync: false }));
}
