/**
 * Every error code the service (and the client library) can report, with the HTTP status the
 * server answers it with. Shared so that the client maps codes to error classes without guessing.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UPGRADE_REQUIRED: 426,
  RATE_LIMITED: 429,
  // The spec names these four without a status; ours are documented in docs/api-guide.md.
  CAP_EXCEEDED: 429,
  COST_BUDGET_EXCEEDED: 429,
  TRIAL_EXPIRED: 402,
  CONTROL_PLANE_ONLY: 403,
  INTERNAL: 500,
  ENTITLEMENT_DEGRADED: 503,
  /** The database could not answer in time (down, restarting, locked): retry after Retry-After. */
  SERVICE_UNAVAILABLE: 503,
  /** Raised by the client library only, when owner ids disagree; never sent by the server. */
  INVALID_OWNER_ID: 400,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];
