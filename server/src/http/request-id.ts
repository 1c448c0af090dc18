import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Correlation id: echoed from a sane incoming x-request-id, or made here. */
      requestId: string;
      startedAt: bigint;
      /** Set when the handler already wrote this request's audit record (in its transaction). */
      auditRecorded?: boolean;
    }
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Gives every request an id and puts it on the response before anything else can answer. */
export function requestId({ header = 'x-request-id' } = {}): RequestHandler {
  return function requestIdMiddleware(req, res, next) {
    const incoming = req.get(header);
    req.requestId = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.startedAt = process.hrtime.bigint();
    res.setHeader(header, req.requestId);
    next();
  };
}
