import type { RequestHandler } from 'express';
import { ServiceError } from '../errors.js';
import { sendError } from './errors.js';
import type { RouteTable } from './route-table.js';

/** A known path called with a method it does not support: 405 with Allow. */
export function methodGuard(table: RouteTable): RequestHandler {
  return function methodGuardMiddleware(req, res, next) {
    const allowed = table.allowedMethods(req.path);
    if (!allowed || allowed.includes(req.method)) return next();
    sendError(
      req,
      res,
      new ServiceError(
        'METHOD_NOT_ALLOWED',
        `${req.method} is not supported on ${req.path}`,
        undefined,
        {
          Allow: allowed.join(', '),
        },
      ),
    );
  };
}
