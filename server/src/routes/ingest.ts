import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, Request, RequestHandler } from 'express';
import { memoryWriteDeps, type AppDeps } from '../deps.js';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { markAudited, requestInputs } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { ingestConversation } from '../services/conversation.js';
import { ingest, type IngestRequest } from '../services/ingest.js';

const s = initServer();

function ingestRequest(req: Request): IngestRequest {
  const { workspaceId } = requireAuth(req);
  const { piiScan, audit } = requestInputs(req);
  return { workspaceId, piiScan, audit };
}

export function mountIngestRoutes(
  target: IRouter,
  table: RouteTable,
  deps: AppDeps,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.ingest, {
    ingestConversation: async ({ req, body }) => {
      const result = await ingestConversation(memoryWriteDeps(deps), ingestRequest(req), body);
      markAudited(req, result.audited);
      return { status: 200, body: result.response };
    },
    ingest: async ({ req, body }) => {
      const result = await ingest(memoryWriteDeps(deps), ingestRequest(req), body);
      markAudited(req, result.audited);
      return { status: 200, body: result.response };
    },
  });
  mountContract(target, table, contract.ingest, implementation, middleware);
}
