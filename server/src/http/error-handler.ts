import { RequestValidationError } from '@ts-rest/express';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import { tooLarge } from './body.js';
import { ServiceError, type ErrorDetails } from '../errors.js';
import { unavailableError } from '../db/faults.js';
import { deadlinePassed } from './deadline.js';
import { sendError } from './errors.js';
import { validationError, zodDetails } from './validation.js';

/** The last route: no handler for this path. */
export function notFound(): RequestHandler {
  return function notFoundHandler(req, res) {
    sendError(req, res, new ServiceError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
  };
}

function toApiError(error: unknown, maxBodyBytes: number): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  if (error instanceof RequestValidationError) {
    const details: ErrorDetails = {};
    if (error.pathParams) zodDetails(error.pathParams, 'path', details);
    if (error.headers) zodDetails(error.headers, 'headers', details);
    if (error.query) zodDetails(error.query, 'query', details);
    if (error.body) zodDetails(error.body, 'body', details);
    return validationError(details);
  }
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') {
    return new ServiceError('BAD_REQUEST', 'Malformed JSON in request body', {
      body: ['is not valid JSON'],
    });
  }
  if (type === 'entity.too.large') return tooLarge(maxBodyBytes);
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ServiceError('BAD_REQUEST', 'Unsupported body encoding or charset', {
      body: ['must be UTF-8 JSON'],
    });
  }
  if (type === 'request.aborted')
    return new ServiceError('BAD_REQUEST', 'Request body was aborted');
  if (error instanceof URIError) {
    return new ServiceError('BAD_REQUEST', 'Malformed percent-encoding in the request path', {
      path: ['is not valid percent-encoding'],
    });
  }
  // Other client errors raised by Express or its parsers carry a 4xx status.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ServiceError('BAD_REQUEST', 'Malformed request');
  }
  // The database could not serve it (unreachable, killed connection, timeout, lock): 503.
  // Anything else (a DatabaseError from a query, another driver error, a bug) is unexpected.
  return unavailableError(error);
}

/** Every failure leaves as the one error envelope; unexpected ones are logged, never leaked. */
export function errorHandler({
  logger,
  maxBodyBytes,
}: {
  logger: Logger;
  maxBodyBytes: number;
}): ErrorRequestHandler {
  let unavailable = 0;
  let unavailableLoggedAt = 0;
  return function errorHandlerMiddleware(error: unknown, req, res, next) {
    // The deadline answered already; the handler's late failure (often the very database error
    // that made it late) has nowhere to go.
    if (res.headersSent && deadlinePassed(res)) return;
    if (res.headersSent) return next(error);
    const known = toApiError(error, maxBodyBytes);
    if (known?.code === 'SERVICE_UNAVAILABLE') {
      // Expected under faults, not a bug: one line per second at most, with how many it stands for.
      unavailable += 1;
      if (Date.now() - unavailableLoggedAt >= 1000) {
        logger.warn(
          { err: error, request_id: req.requestId, count: unavailable },
          'database unavailable; answered 503',
        );
        unavailable = 0;
        unavailableLoggedAt = Date.now();
      }
    }
    if (known) return sendError(req, res, known);
    logger.error({ err: error, request_id: req.requestId }, 'unhandled error');
    sendError(req, res, new ServiceError('INTERNAL', 'Internal server error'));
  };
}
