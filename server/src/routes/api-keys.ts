import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import {
  listOperatorKeys,
  mintOperatorKey,
  revokeOperatorKey,
  type KeyAdminDeps,
} from '../services/api-keys/admin.js';

const s = initServer();

/** `/v1/api-keys*`: API keys of any workspace, behind the admin guard (token, allowlist). */
export function mountApiKeyRoutes(
  target: IRouter,
  table: RouteTable,
  keyAdmin: KeyAdminDeps,
  /** The app's one admin guard (a signed token's nonce is remembered across its routes). */
  adminGuard: RequestHandler,
): void {
  const implementation = s.router(contract.apiKeys, {
    createApiKey: async ({ body }) => ({
      status: 201,
      body: await mintOperatorKey(keyAdmin, {
        workspaceId: body.workspace_id,
        name: body.name,
        scope: body.scope,
      }),
    }),
    listApiKeys: async ({ query }) => ({
      status: 200,
      body: await listOperatorKeys(keyAdmin, query.workspace_id),
    }),
    revokeApiKey: async ({ params }) => ({
      status: 200,
      body: await revokeOperatorKey(keyAdmin, params.id),
    }),
  });
  mountContract(target, table, contract.apiKeys, implementation, [adminGuard]);
}
