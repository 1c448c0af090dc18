import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { searchDeps, type AppDeps } from '../deps.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { requestInputs } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import {
  listSearchHistory,
  replaySearch,
  sendContextFeedback,
} from '../services/search-history.js';

const s = initServer();

export function mountHistoryRoutes(
  target: IRouter,
  table: RouteTable,
  deps: AppDeps,
  middleware: RequestHandler[],
): void {
  const { db } = deps.database;
  const retrieval = searchDeps(deps);
  const implementation = s.router(contract.history, {
    getSearchHistory: async ({ req, query }) => {
      const { workspaceId } = requireAuth(req);
      // Searches save their history in the background: one just answered is listed too.
      await deps.background.drain();
      return { status: 200, body: await listSearchHistory(db, workspaceId, query) };
    },
    replaySearch: async ({ req, body }) => {
      const { workspaceId } = requireAuth(req);
      await deps.background.drain();
      return {
        status: 200,
        body: await replaySearch(retrieval, {
          workspaceId,
          requestId: requestInputs(req).requestId,
          queryId: body.query_id,
          session: req.auth?.session !== undefined,
        }),
      };
    },
    sendContextFeedback: async ({ req, body }) => ({
      status: 200,
      body: await sendContextFeedback(db, requireAuth(req).workspaceId, body, deps.background),
    }),
  });
  mountContract(target, table, contract.history, implementation, middleware);
}
