import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { connectorSettings, patchConnectorSettings } from '../services/connectors.js';

const s = initServer();

/** Per-workspace connector settings (tenant operator routes). */
export function mountConnectorRoutes(
  target: IRouter,
  table: RouteTable,
  db: Database,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.connectors, {
    getConnectorSettings: async ({ req }) => ({
      status: 200,
      body: await connectorSettings(db, requireAuth(req).workspaceId),
    }),
    updateConnectorSettings: async ({ req, body }) => ({
      status: 200,
      body: await patchConnectorSettings(db, requireAuth(req).workspaceId, body),
    }),
  });
  mountContract(target, table, contract.connectors, implementation, middleware);
}
