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
