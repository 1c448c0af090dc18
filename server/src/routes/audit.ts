import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { listAuditLog } from '../services/audit/log.js';
import { pruningMetrics } from '../services/pruning.js';

const s = initServer();

/** The caller's audit log and pruning metrics (tenant operator routes). */
export function mountAuditRoutes(
  target: IRouter,
  table: RouteTable,
  db: Database,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.audit, {
    getAuditLog: async ({ req, query }) => ({
      status: 200,
      body: await listAuditLog(db, requireAuth(req).workspaceId, query),
    }),
    getPruningMetrics: async ({ req }) => ({
      status: 200,
      body: await pruningMetrics(db, requireAuth(req).workspaceId),
    }),
  });
  mountContract(target, table, contract.audit, implementation, middleware);
}
