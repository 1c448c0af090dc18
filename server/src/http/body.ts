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
  return express.json({ limit: maxBytes, type: ['application/json', 'application/*+json'] });
}

export function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError(
    'PAYLOAD_TOO_LARGE',
    `Request body exceeds the limit of ${maxBytes} bytes`,
  );
}
