import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { ServiceError } from '../errors.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/**
 * After the tenant auth, before the body is validated: only an API key of scope `admin` passes
 * (a session or a tenant key: 403), so another caller learns nothing about the route.
 */
function requireAdminScope(): RequestHandler {
  return function requireAdminScopeMiddleware(req, _res, next) {
    if (req.auth?.scope === 'admin') return next();
    next(new ServiceError('FORBIDDEN', 'This route needs an API key of scope admin'));
  };
}

/**
 * `POST /v1/workspaces` with an admin-scoped API key. The tenant chain runs first (key auth,
 * per-key and per-workspace limits), then the scope check.
 */
export function mountWorkspaceRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'createWorkspace'>,
  tenant: RequestHandler[],
): void {
  const implementation = s.router(contract.workspaces, {
    createWorkspace: async ({ req, body }) => ({
      status: 201,
      body: await operations.createWorkspace(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.workspaces, implementation, [
    ...tenant,
    requireAdminScope(),
  ]);
}
