import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter } from 'express';
import type { AppDeps } from '../deps.js';
import { adminAuth } from '../http/admin-auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { runHygiene } from '../jobs/hygiene.js';

const s = initServer();

/**
 * Operator routes (outside the published contract), guarded by the admin token. The guard runs
 * before the query is validated: without the token a caller learns nothing about the route.
 */
export function mountAdminRoutes(target: IRouter, table: RouteTable, deps: AppDeps): void {
  const implementation = s.router(contract.admin, {
    runMemoryHygiene: async ({ query }) => ({
      status: 200,
      body: await runHygiene(deps.database.db, {
        dryRun: query.dry_run,
        limit: query.limit,
        ...(query.workspace_id ? { workspaceId: query.workspace_id } : {}),
        nearThreshold: deps.config.dedupe.nearThreshold,
      }),
    }),
  });
  mountContract(target, table, contract.admin, implementation, [
    adminAuth({ token: deps.config.adminToken }),
  ]);
}
