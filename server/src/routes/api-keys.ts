import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { operatorCallerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/** `/v1/api-keys*`: API keys of any workspace, behind the admin guard (token, allowlist). */
export function mountApiKeyRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'createApiKey' | 'listApiKeys' | 'revokeApiKey'>,
  /** The app's one admin guard (a signed token's nonce is remembered across its routes). */
  adminGuard: RequestHandler,
): void {
  const implementation = s.router(contract.apiKeys, {
    createApiKey: async ({ req, body }) => ({
      status: 201,
      body: await operations.createApiKey(operatorCallerOf(req), body),
    }),
    listApiKeys: async ({ req, query }) => ({
      status: 200,
      body: await operations.listApiKeys(operatorCallerOf(req), query),
    }),
    revokeApiKey: async ({ req, params }) => ({
      status: 200,
      body: await operations.revokeApiKey(operatorCallerOf(req), params),
    }),
  });
  mountContract(target, table, contract.apiKeys, implementation, [adminGuard]);
}
