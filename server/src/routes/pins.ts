import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { getPins, updatePins } from '../services/pins.js';

const s = initServer();

export function mountPinRoutes(
  target: IRouter,
  table: RouteTable,
  db: Database,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.pins, {
    updatePins: async ({ req, body }) => ({
      status: 200,
      body: await updatePins(db, requireAuth(req).workspaceId, body),
    }),
    getPins: async ({ req, query }) => ({
      status: 200,
      body: await getPins(db, requireAuth(req).workspaceId, query),
    }),
  });
  mountContract(target, table, contract.pins, implementation, middleware);
}
