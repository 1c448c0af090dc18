import express, { type RequestHandler } from 'express';
import { ServiceError } from '../errors.js';
import { sendError } from './errors.js';

/**
 * Refuses bodies over the limit from their declared length before reading them, then parses
 * JSON with the same limit (which also catches chunked bodies without a length).
 */
export function bodyLimit({ maxBytes }: { maxBytes: number }): RequestHandler {
  return function bodyLimitMiddleware(req, res, next) {
    const declared = Number(req.get('content-length') ?? 0);
    if (declared > maxBytes) {
      res.setHeader('Connection', 'close');
      return sendError(req, res, tooLarge(maxBytes));
    }
    next();
  };
}

export function jsonBody({ maxBytes }: { maxBytes: number }): RequestHandler {
  return express.json({
    limit: maxBytes,
    type: ['application/json', 'application/*+json'],
    // A signed admin token covers the exact body bytes (http/admin-auth.ts): keep them, only then.
    verify: (req, _res, buffer) => {
      if (req.headers['x-admin-token']?.toString().startsWith('v1,')) {
        (req as express.Request).rawBody = Buffer.from(buffer);
      }
    },
  });
}

export function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError(
    'PAYLOAD_TOO_LARGE',
    `Request body exceeds the limit of ${maxBytes} bytes`,
  );
}
