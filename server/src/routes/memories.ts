import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountMemoryRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'writeMemory' | 'listMemories' | 'getMemory' | 'deleteMemory'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.memories, {
    createMemory: async ({ req, body }) => ({
      status: 200,
      body: await operations.writeMemory(callerOf(req, 'rest'), body),
    }),
    listMemories: async ({ req, query }) => ({
      status: 200,
      body: await operations.listMemories(callerOf(req, 'rest'), query),
    }),
    getMemory: async ({ req, params }) => ({
      status: 200,
      body: await operations.getMemory(callerOf(req, 'rest'), params),
    }),
    deleteMemory: async ({ req, params }) => ({
      status: 200,
      body: await operations.deleteMemory(callerOf(req, 'rest'), params),
    }),
  });
  mountContract(target, table, contract.memories, implementation, middleware);
}
