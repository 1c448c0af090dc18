import type { ErrorCode, ErrorEnvelope } from '@mnemo/contract';
import { ERROR_STATUS } from '@mnemo/contract';
import type { Request, Response } from 'express';

export type ErrorDetails = Record<string, string[]>;

/** The one error type services throw; the error handler turns it into the envelope. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(requestId: string): ErrorEnvelope {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
      request_id: requestId,
    };
  }
}

export function sendError(req: Request, res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(error.toBody(req.requestId));
}
