import type { ErrorEnvelope } from '@mnemo/contract';
import type { Request, Response } from 'express';
import type { ServiceError } from '../errors.js';

/** The spec's error envelope for a domain error; `request_id` equals the `x-request-id` header. */
export function errorEnvelope(error: ServiceError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
    request_id: requestId,
  };
}

/** Dashboard routes answer failures as `{ok: false, error}` (the spec's Dashboard section). */
export const DASHBOARD_PATH_PREFIX = '/v1/dashboard';

function isDashboardPath(path: string): boolean {
  return path === DASHBOARD_PATH_PREFIX || path.startsWith(`${DASHBOARD_PATH_PREFIX}/`);
}

export function sendError(req: Request, res: Response, error: ServiceError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const envelope = errorEnvelope(error, req.requestId);
  res
    .status(error.status)
    .json(
      isDashboardPath(req.originalUrl.split('?')[0] ?? '') ? { ok: false, ...envelope } : envelope,
    );
}
