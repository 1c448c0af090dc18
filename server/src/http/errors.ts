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

export function sendError(req: Request, res: Response, error: ServiceError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(errorEnvelope(error, req.requestId));
}
