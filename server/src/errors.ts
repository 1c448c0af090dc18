import type { ErrorCode } from '@mnemo/contract';
import { ERROR_STATUS } from '@mnemo/contract';

export type ErrorDetails = Record<string, string[]>;

/**
 * The one error type of the domain: services and queries throw it, with a code from the contract;
 * the HTTP layer (and the MCP tools) turn it into the error envelope. It sits below every layer so
 * that nothing under `http/` is imported by a service.
 */
export class ServiceError extends Error {
  /** The HTTP status the contract gives this code. */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    /** Response headers the answer must carry (`Retry-After`, `Allow`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_STATUS[code];
  }
}

/**
 * The database did something a query did not expect (an insert that returned no row, a row gone
 * right after it was written): a fault of the server, never of the request. Deliberately not a
 * {@link ServiceError}: the HTTP error handler and the MCP tools treat it as any unexpected
 * failure (logged, answered 500 INTERNAL with the generic message), so its text, which names
 * tables and keys, never reaches a client.
 */
export class DatabaseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseError';
  }
}

/**
 * The server's own code called something outside its precondition (an unknown chunk profile, a
 * negative usage amount): a bug, never the request's fault, since every input was validated
 * against the contract first. Like {@link DatabaseError}, answered as an unexpected failure (500
 * INTERNAL, generic message).
 */
export class InvariantError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvariantError';
  }
}

/**
 * A component was given settings or a data file it cannot run with (a provider without its URL, a
 * corrupt word-vector table, a malformed language file): found while the server starts.
 */
export class SetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SetupError';
  }
}
