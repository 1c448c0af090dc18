import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/** The caller's audit log and pruning metrics (tenant operator routes). */
export function mountAuditRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'getAuditLog' | 'getPruningMetrics'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.audit, {
    getAuditLog: async ({ req, query }) => ({
      status: 200,
      body: await operations.getAuditLog(callerOf(req, 'rest'), query),
    }),
    getPruningMetrics: async ({ req }) => ({
      status: 200,
      body: await operations.getPruningMetrics(callerOf(req, 'rest'), undefined),
    }),
  });
  mountContract(target, table, contract.audit, implementation, middleware);
}
