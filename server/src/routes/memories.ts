import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { AppDeps } from '../deps.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { markAudited, requestInputs } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { deleteMemory, getMemory, listMemories } from '../services/memories.js';
import { memoryWriteDeps } from '../deps.js';
import { writeMemory } from '../services/memory-write.js';

const s = initServer();

export function mountMemoryRoutes(
  target: IRouter,
  table: RouteTable,
  deps: AppDeps,
  middleware: RequestHandler[],
): void {
  const { db } = deps.database;
  const implementation = s.router(contract.memories, {
    createMemory: async ({ req, body }) => {
      const { workspaceId } = requireAuth(req);
      const { piiScan, audit } = requestInputs(req);
      const result = await writeMemory(memoryWriteDeps(deps), {
        workspaceId,
        payload: body,
        piiScan,
        audit,
      });
      markAudited(req, result.audited);
      return { status: 200, body: result.response };
    },
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
  mountContract(target, table, contract.memories, implementation, middleware);
}
