import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountIngestRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'ingest' | 'ingestConversation'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.ingest, {
    ingestConversation: async ({ req, body }) => ({
      status: 200,
      body: await operations.ingestConversation(callerOf(req, 'rest'), body),
    }),
    ingest: async ({ req, body }) => ({
      status: 200,
      body: await operations.ingest(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.ingest, implementation, middleware);
}
