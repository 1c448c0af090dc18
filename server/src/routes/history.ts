import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';
import type { BackgroundTasks } from '../services/background.js';
import { listSearchHistory, sendContextFeedback } from '../services/search-history.js';

export interface HistoryRouteDeps {
  operations: Pick<Operations, 'replaySearch'>;
  db: Database;
  /** Saves search history and applies feedback off the response path. */
  background: BackgroundTasks;
}

const s = initServer();

export function mountHistoryRoutes(
  target: IRouter,
  table: RouteTable,
  { operations, db, background }: HistoryRouteDeps,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.history, {
    getSearchHistory: async ({ req, query }) => {
      const { workspaceId } = requireAuth(req);
      // Searches save their history in the background: one just answered is listed too.
      await background.drain();
      return { status: 200, body: await listSearchHistory(db, workspaceId, query) };
    },
    replaySearch: async ({ req, body }) => ({
      status: 200,
      body: await operations.replaySearch(callerOf(req, 'rest'), body),
    }),
    sendContextFeedback: async ({ req, body }) => ({
      status: 200,
      body: await sendContextFeedback(db, requireAuth(req).workspaceId, body, background),
    }),
  });
  mountContract(target, table, contract.history, implementation, middleware);
}
