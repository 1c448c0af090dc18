import type { AppRouter } from '@ts-rest/core';
import { createExpressEndpoints } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { listRoutes } from '@mnemo/contract';
import type { RouteTable } from './route-table.js';

/**
 * Mounts one contract area and records its paths in the route table (405/OPTIONS). Validation
 * errors go on to the app's error handler so they share the envelope.
 */
export function mountContract<T extends AppRouter>(
  target: IRouter,
  table: RouteTable,
  area: T,
  implementation: Parameters<typeof createExpressEndpoints<T>>[1],
  middleware: RequestHandler[] = [],
): void {
  for (const route of listRoutes(area)) table.add(route.method, route.path);
  createExpressEndpoints(area, implementation, target, {
    logInitialization: false,
    jsonQuery: false,
    responseValidation: false,
    globalMiddleware: middleware,
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });
}
