import { DatabaseError, ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Seconds a client is told to wait before retrying a request the database could not serve. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * SQLSTATEs (and their classes) that say the database could not serve the statement now, not
 * that the statement was wrong: a retry later may succeed.
 */
const UNAVAILABLE_STATES = new Set([
  '57014', // query_canceled: statement_timeout (or a cancel from an operator)
  '55P03', // lock_not_available: lock_timeout
  '57P01', // admin_shutdown: pg_terminate_backend, fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, recovering
  '57P05', // idle_session_timeout
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '25P03', // idle_in_transaction_session_timeout
]);
/** Whole classes: 08 connection exception, 53 insufficient resources (too many connections, disk). */
const UNAVAILABLE_CLASSES = ['08', '53'];

/**
 * A statement that always answers one row answered none: the connection lost the answer. Raised
 * by our own queries (not by PostgreSQL or the driver) and treated as a lost connection.
 */
export const INCOMPLETE_RESULT = 'INCOMPLETE_RESULT';

/**
 * The error for {@link INCOMPLETE_RESULT}: `what` (a statement that selects exactly one row
 * whatever the data) came back empty, seen rarely around a network black hole. A fault to retry
 * (503), not a 500.
 */
export function lostAnswer(what: string): DatabaseError {
  return new DatabaseError(`${what} returned no row`, { cause: { code: INCOMPLETE_RESULT } });
}

/** postgres.js's own codes for a connection it lost or could not make, and Node's socket errors. */
const CONNECTION_CODES = new Set([
  INCOMPLETE_RESULT,
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** States after which the statement may simply be sent again on another connection. */
const CONNECTION_LOST_STATES = new Set(['57P01', '57P02', '57P03']);

/** The error and its causes (drizzle wraps the driver's error as `cause`), outermost first. */
function* chain(error: unknown): Generator<Record<string, unknown>> {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    yield current as Record<string, unknown>;
    current = (current as { cause?: unknown }).cause;
  }
}

function codeOf(error: unknown): string | undefined {
  for (const link of chain(error)) {
    if (typeof link.code === 'string') return link.code;
    // An AggregateError (Node's connect to several addresses) keeps its parts in `errors`.
    if (Array.isArray(link.errors)) {
      const inner = link.errors.find(
        (e: unknown) => typeof (e as { code?: unknown })?.code === 'string',
      );
      if (inner) return (inner as { code: string }).code;
    }
  }
  return undefined;
}

/**
 * Logs work that failed off the request path (a job's run, a deferred write): a warning when the
 * database was unavailable (expected under faults, and retried or refunded later), an error
 * otherwise.
 */
export function logBackgroundFailure(
  logger: Logger | undefined,
  err: unknown,
  fields: Record<string, unknown>,
  message: string,
): void {
  if (isDatabaseUnavailable(err)) logger?.warn({ ...fields, err }, message);
  else logger?.error({ ...fields, err }, message);
}

/** Whether the error says the database is unreachable, overloaded, locked or timed out. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (code === undefined) return false;
  return (
    UNAVAILABLE_STATES.has(code) ||
    CONNECTION_CODES.has(code) ||
    (code.length === 5 && UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))
  );
}

/**
 * Whether the connection was lost (killed, closed, refused) rather than the statement timing out
 * or waiting on a lock: sending a read again on a fresh connection is then worth one try, while
 * a timed-out statement would only time out again.
 */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  if (code === undefined) return false;
  return CONNECTION_CODES.has(code) || CONNECTION_LOST_STATES.has(code) || code.startsWith('08');
}

/** The domain error a request gets when the database could not serve it: 503 with Retry-After. */
export function serviceUnavailable(): ServiceError {
  return new ServiceError(
    'SERVICE_UNAVAILABLE',
    'The database is unavailable; retry shortly',
    undefined,
    { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  );
}

/** {@link serviceUnavailable} for a database fault, undefined for any other error. */
export function unavailableError(error: unknown): ServiceError | undefined {
  return isDatabaseUnavailable(error) ? serviceUnavailable() : undefined;
}
