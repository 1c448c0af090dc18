import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

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
