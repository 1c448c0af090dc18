import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { createLink, deleteLink, listLinks } from '../services/links.js';

const s = initServer();

export function mountLinkRoutes(
  target: IRouter,
  table: RouteTable,
  db: Database,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.links, {
    createLink: async ({ req, params, body }) => ({
      status: 200,
      body: await createLink(db, requireAuth(req).workspaceId, params.id, body),
    }),
    listLinks: async ({ req, params }) => ({
      status: 200,
      body: await listLinks(db, requireAuth(req).workspaceId, params.id),
    }),
    deleteLink: async ({ req, params, query }) => ({
      status: 200,
      body: await deleteLink(db, requireAuth(req).workspaceId, params.id, query),
    }),
  });
  mountContract(target, table, contract.links, implementation, middleware);
}
