import { isDatabaseUnavailable } from './db/faults.js';
import type { Logger } from './logger.js';

/** At most one log line per this interval; the lines between are counted in the next one. */
const LOG_INTERVAL_MS = 1_000;

export interface RejectionCounter {
  /** The `unhandledRejection` listener. */
  listener: (reason: unknown) => void;
  /** Unhandled rejections seen since start. */
  readonly total: number;
}

/**
 * A serving process survives an unhandled rejection: one request's bug (or a promise a driver
 * drops under a fault) must not drop every request in flight. Each is counted and logged
 * (throttled, with the count), as an error unless it is a database fault the pool recovers from.
 */
export function survivingRejections(
  logger: Logger,
  now: () => number = Date.now,
): RejectionCounter {
  let total = 0;
  let sinceLogged = 0;
  let loggedAt = -Infinity;
  return {
    listener(reason) {
      total += 1;
      sinceLogged += 1;
      if (now() - loggedAt < LOG_INTERVAL_MS) return;
      const fields = { err: reason, unhandled_rejections: total, since_last_line: sinceLogged };
      if (isDatabaseUnavailable(reason)) {
        logger.warn(fields, 'unhandled database fault ignored; the pool reconnects');
      } else {
        logger.error(fields, 'unhandled rejection; the process goes on');
      }
      sinceLogged = 0;
      loggedAt = now();
    },
    get total() {
      return total;
    },
  };
}
