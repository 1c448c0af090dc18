import type { RequestHandler, Response } from 'express';
import { serviceUnavailable } from '../db/faults.js';
import { sendError } from './errors.js';

const PASSED = Symbol('deadline passed');

/** Whether {@link requestDeadline} answered this response (the handler may still be running). */
export function deadlinePassed(res: Response): boolean {
  return (res.locals as Record<symbol, unknown>)[PASSED] === true;
}

/**
 * A request that has not answered `ms` after it arrived answers 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After`, even when the database never replies (a hung connection, a queue for the pool):
 * the statement and lock timeouts bound what the database does, this bounds what the client
 * waits. The handler keeps running; what it sends later is dropped (see the error handler).
 * `skip` exempts long-lived responses (MCP event streams).
 */
export function requestDeadline({
  ms,
  skip,
}: {
  ms: number;
  skip?: (path: string) => boolean;
}): RequestHandler {
  return function requestDeadlineMiddleware(req, res, next) {
    if (ms <= 0 || skip?.(req.path)) return next();
    const timer = setTimeout(() => {
      if (res.headersSent || res.writableEnded) return;
      (res.locals as Record<symbol, unknown>)[PASSED] = true;
      sendError(req, res, serviceUnavailable());
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}
