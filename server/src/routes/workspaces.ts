import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { ServiceError } from '../errors.js';
import { createTenantWorkspace, type KeyAdminDeps } from '../services/api-keys/admin.js';

const s = initServer();

/** After the tenant auth: only an API key of scope `admin` passes (a session or a tenant key: 403). */
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
  keyAdmin: KeyAdminDeps,
  tenant: RequestHandler[],
): void {
  const implementation = s.router(contract.workspaces, {
    createWorkspace: async ({ req, body }) => {
      const auth = requireAuth(req);
      return {
        status: 201,
        body: await createTenantWorkspace(keyAdmin, {
          name: body.name,
          createdBy: { workspaceId: auth.workspaceId, apiKeyId: auth.apiKeyId },
        }),
      };
    },
  });
  mountContract(target, table, contract.workspaces, implementation, [
    ...tenant,
    requireAdminScope(),
  ]);
}
