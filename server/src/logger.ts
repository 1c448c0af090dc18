import { destination, pino, type Logger } from 'pino';

export type { Logger };

/** Log lines wait in memory until this many bytes are buffered... */
const LOG_BUFFER_BYTES = 4096;
/** ...or this long, whichever comes first. */
const LOG_FLUSH_MS = 250;

/**
 * JSON lines on stdout, written asynchronously and in batches: a write per request line costs a
 * system call on the event loop (measured in the speed bench: on this kind of VM, the largest
 * share of a search's own CPU after the database socket's). Lines reach stdout within
 * LOG_FLUSH_MS; `main.ts` flushes on shutdown.
 */
export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: 'mnemo' } },
    destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}
