import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountUsageRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'getUsageToday' | 'getUsageHistory' | 'getMemoryBreakdown'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.usage, {
    getUsageToday: async ({ req }) => ({
      status: 200,
      body: await operations.getUsageToday(callerOf(req, 'rest'), undefined),
    }),
    getUsageHistory: async ({ req, query }) => ({
      status: 200,
      body: await operations.getUsageHistory(callerOf(req, 'rest'), query),
    }),
    getMemoryBreakdown: async ({ req }) => ({
      status: 200,
      body: await operations.getMemoryBreakdown(callerOf(req, 'rest'), {}),
    }),
  });
  mountContract(target, table, contract.usage, implementation, middleware);
}
