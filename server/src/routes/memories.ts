import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { AppDeps } from '../app.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { deleteMemory, getMemory, listMemories } from '../services/memories.js';

const s = initServer();

/** Reads and deletes. The write pipeline (createMemory) is mounted with its own service. */
const memoryReads = {
  listMemories: contract.memories.listMemories,
  getMemory: contract.memories.getMemory,
  deleteMemory: contract.memories.deleteMemory,
};

export function mountMemoryRoutes(
  target: IRouter,
  table: RouteTable,
  { database }: AppDeps,
  middleware: RequestHandler[],
): void {
  const { db } = database;
  const implementation = s.router(memoryReads, {
    listMemories: async ({ req, query }) => ({
      status: 200,
      body: await listMemories(db, requireAuth(req).workspaceId, query),
    }),
    getMemory: async ({ req, params }) => ({
      status: 200,
      body: await getMemory(db, requireAuth(req).workspaceId, params.id),
    }),
    deleteMemory: async ({ req, params }) => ({
      status: 200,
      body: await deleteMemory(db, requireAuth(req).workspaceId, params.id),
    }),
  });
  mountContract(target, table, memoryReads, implementation, middleware);
}
