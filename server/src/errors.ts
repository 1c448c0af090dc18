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
