import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/** Per-workspace connector settings (tenant operator routes). */
export function mountConnectorRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'getConnectorSettings' | 'updateConnectorSettings'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.connectors, {
    getConnectorSettings: async ({ req }) => ({
      status: 200,
      body: await operations.getConnectorSettings(callerOf(req, 'rest'), undefined),
    }),
    updateConnectorSettings: async ({ req, body }) => ({
      status: 200,
      body: await operations.updateConnectorSettings(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.connectors, implementation, middleware);
}
