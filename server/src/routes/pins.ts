import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountPinRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'updatePins' | 'getPins'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.pins, {
    updatePins: async ({ req, body }) => ({
      status: 200,
      body: await operations.updatePins(callerOf(req, 'rest'), body),
    }),
    getPins: async ({ req, query }) => ({
      status: 200,
      body: await operations.getPins(callerOf(req, 'rest'), query),
    }),
  });
  mountContract(target, table, contract.pins, implementation, middleware);
}
