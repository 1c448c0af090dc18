import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountSearchRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'searchMemories' | 'getContext' | 'sendFeedback'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.search, {
    searchMemories: async ({ req, body }) => ({
      status: 200,
      body: await operations.searchMemories(callerOf(req, 'rest'), body),
    }),
    getContext: async ({ req, body }) => ({
      status: 200,
      body: await operations.getContext(callerOf(req, 'rest'), body),
    }),
    sendFeedback: async ({ req, body }) => ({
      status: 200,
      body: await operations.sendFeedback(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.search, implementation, middleware);
}
