import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { AppDeps } from '../deps.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { requestInputs } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { buildContext } from '../services/retrieval/context.js';
import { applyFeedback } from '../services/retrieval/feedback.js';
import { searchDeps } from '../deps.js';
import { searchMemories } from '../services/retrieval/search.js';

const s = initServer();

export function mountSearchRoutes(
  target: IRouter,
  table: RouteTable,
  deps: AppDeps,
  middleware: RequestHandler[],
): void {
  const retrieval = searchDeps(deps);
  const implementation = s.router(contract.search, {
    searchMemories: async ({ req, body }) => {
      const { requestId, saveHistory } = requestInputs(req);
      const { results, page, page_size, total, has_more } = await searchMemories(retrieval, {
        workspaceId: requireAuth(req).workspaceId,
        requestId,
        route: 'search',
        payload: body,
        saveHistory,
        explain: body.explain === true && req.auth?.session !== undefined,
      });
      return { status: 200, body: { results, page, page_size, total, has_more } };
    },
    getContext: async ({ req, body }) => ({
      status: 200,
      body: await buildContext(retrieval, {
        workspaceId: requireAuth(req).workspaceId,
        requestId: requestInputs(req).requestId,
        route: 'context',
        payload: body,
      }),
    }),
    sendFeedback: async ({ req, body }) => ({
      status: 200,
      body: await applyFeedback(
        deps.database.db,
        requireAuth(req).workspaceId,
        body,
        deps.background,
      ),
    }),
  });
  mountContract(target, table, contract.search, implementation, middleware);
}
