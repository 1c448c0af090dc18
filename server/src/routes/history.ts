import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountHistoryRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'getSearchHistory' | 'replaySearch' | 'sendContextFeedback'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.history, {
    getSearchHistory: async ({ req, query }) => ({
      status: 200,
      body: await operations.getSearchHistory(callerOf(req, 'rest'), query),
    }),
    replaySearch: async ({ req, body }) => ({
      status: 200,
      body: await operations.replaySearch(callerOf(req, 'rest'), body),
    }),
    sendContextFeedback: async ({ req, body }) => ({
      status: 200,
      body: await operations.sendContextFeedback(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.history, implementation, middleware);
}
