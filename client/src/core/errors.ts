import type { ErrorCode } from '@mnemo/contract';
import { parseRetryAfter } from '../internal/backoff.js';

/**
 * Codes the client itself reports, for failures that carry no server envelope: a non-envelope
 * error body (a proxy's 502 page, say), a response that is not JSON, a network failure, a timeout
 * or a cancellation by the caller.
 */
export type ClientErrorCode =
  | 'HTTP_ERROR'
  | 'INVALID_RESPONSE'
  | 'CONNECTION_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'MCP_TOOL_ERROR'
  | 'MCP_SDK_MISSING'
  | 'INVALID_OWNER_ID';

/**
 * Every code a {@link MnemoError} can carry: the server's codes, the client's own, and (so that
 * a newer server never breaks an older client) any other string.
 */
export type MnemoErrorCode = ErrorCode | ClientErrorCode | (string & {});

/** Field name → messages, as the server reports validation failures. */
export type ErrorDetails = Record<string, string[]>;

/** What every {@link MnemoError} is built from. */
export interface MnemoErrorInit {
  code: MnemoErrorCode;
  message: string;
  /** HTTP status; absent when no response arrived. */
  status?: number | undefined;
  /** Correlation id from the error envelope or the `x-request-id` header. */
  requestId?: string | undefined;
  details?: ErrorDetails | undefined;
  /** From the response's `Retry-After` header, in milliseconds. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/**
 * Base of every error the client throws. Catch this to handle all of them; catch a subclass
 * (`AuthenticationError`, `RateLimitError`, ...) to handle one family.
 *
 * @example
 * ```ts
 * try {
 *   await client.memories.get(id);
 * } catch (error) {
 *   if (error instanceof NotFoundError) return undefined;
 *   if (error instanceof MnemoError) console.error(error.code, error.requestId);
 *   throw error;
 * }
 * ```
 */
export class MnemoError extends Error {
  override readonly name: string = 'MnemoError';
  /** Machine-readable code, e.g. `UNAUTHORIZED`, `RATE_LIMITED`, `TIMEOUT`. */
  readonly code: MnemoErrorCode;
  /** HTTP status of the response; `undefined` when no response arrived. */
  readonly status: number | undefined;
  /** Server correlation id; quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Field name → messages, on validation failures. */
  readonly details: ErrorDetails | undefined;
  /**
   * How long the server asked the caller to wait (`Retry-After`, on 429 and 503), in
   * milliseconds; `undefined` when it did not say.
   */
  readonly retryAfterMs: number | undefined;

  constructor({ code, message, status, requestId, details, retryAfterMs, cause }: MnemoErrorInit) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.status = status;
    this.requestId = requestId;
    this.details = details;
    this.retryAfterMs = retryAfterMs;
  }
}

/** HTTP 400: the server refused the request as invalid; `details` names the fields. */
export class BadRequestError extends MnemoError {
  override readonly name = 'BadRequestError';
}

/** HTTP 401: the API key is missing or invalid. */
export class AuthenticationError extends MnemoError {
  override readonly name = 'AuthenticationError';
}

/** HTTP 403: the credentials are valid but not allowed to do this. */
export class PermissionDeniedError extends MnemoError {
  override readonly name = 'PermissionDeniedError';
}

/** HTTP 404: no such memory (or no such route). */
export class NotFoundError extends MnemoError {
  override readonly name = 'NotFoundError';
}

/** HTTP 409: an `idempotency_key` was reused with a different payload. */
export class ConflictError extends MnemoError {
  override readonly name = 'ConflictError';
}

/** HTTP 429: a rate limit or a cap was hit; the server sends `Retry-After`. */
export class RateLimitError extends MnemoError {
  override readonly name = 'RateLimitError';
}

/** HTTP 5xx: the server (or a proxy in front of it) failed. */
export class InternalServerError extends MnemoError {
  override readonly name = 'InternalServerError';
}

/** No response arrived: DNS, refused connection, reset socket. `cause` holds the original error. */
export class APIConnectionError extends MnemoError {
  override readonly name: string = 'APIConnectionError';

  constructor({
    message = 'Connection error',
    cause,
  }: { message?: string | undefined; cause?: unknown } = {}) {
    super({ code: 'CONNECTION_ERROR', message, cause });
  }
}

/** No complete response within `timeoutMs` (per attempt). */
export class APITimeoutError extends APIConnectionError {
  override readonly name = 'APITimeoutError';
  override readonly code: MnemoErrorCode = 'TIMEOUT';

  constructor({ timeoutMs }: { timeoutMs: number }) {
    super({ message: `Request timed out after ${timeoutMs} ms` });
  }
}

/** The caller's `signal` aborted the request. `cause` holds the signal's reason. */
export class APIUserAbortError extends MnemoError {
  override readonly name = 'APIUserAbortError';

  constructor({ cause }: { cause?: unknown } = {}) {
    super({ code: 'ABORTED', message: 'Request was aborted', cause });
  }
}

/**
 * Owner ids (or owner types) given under several names disagree: `ownerId: 'a'` with
 * `userId: 'b'`, say. Thrown by the client before any request is sent; `status` is undefined.
 */
export class InvalidOwnerIdError extends MnemoError {
  override readonly name = 'InvalidOwnerIdError';

  constructor(message: string) {
    super({ code: 'INVALID_OWNER_ID', message });
  }
}

const MAX_MESSAGE_LENGTH = 300;

interface Envelope {
  error: { code: string; message: string; details?: ErrorDetails };
  request_id?: string;
}

/**
 * Lenient on purpose: a code this client does not know yet is still the server's code, so only
 * the shape is checked, not the code list.
 */
function isEnvelope(body: unknown): body is Envelope {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error: unknown = body.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

function genericMessage(status: number, body: unknown): string {
  const text =
    typeof body === 'string' ? body.trim() : body === undefined ? '' : JSON.stringify(body);
  if (text === '') return `HTTP ${status}`;
  const clipped = text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
  return `HTTP ${status}: ${clipped}`;
}

function classForStatus(status: number): typeof MnemoError {
  if (status === 400) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return MnemoError;
}

/**
 * The one place an error response becomes an error object. Reads the spec's envelope
 * `{error: {code, message, details?}, request_id}`; when the body is something else (a proxy's
 * HTML page, an empty body) the code is `HTTP_ERROR` and the message quotes the start of the body.
 * The request id falls back to the `x-request-id` header.
 *
 * @param status HTTP status of the response (not 2xx).
 * @param body The parsed JSON body, or the raw text when it was not JSON, or `undefined`.
 * @param headers The response headers.
 */
export function errorFromResponse(status: number, body: unknown, headers: Headers): MnemoError {
  const headerRequestId = headers.get('x-request-id') ?? undefined;
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'));
  const ErrorClass = classForStatus(status);
  if (isEnvelope(body)) {
    return new ErrorClass({
      code: body.error.code,
      message: body.error.message,
      status,
      requestId: typeof body.request_id === 'string' ? body.request_id : headerRequestId,
      details: body.error.details,
      retryAfterMs,
    });
  }
  return new ErrorClass({
    code: 'HTTP_ERROR',
    message: genericMessage(status, body),
    status,
    requestId: headerRequestId,
    retryAfterMs,
  });
}
