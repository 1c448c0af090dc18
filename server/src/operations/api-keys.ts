import {
  contract,
  type ApiKeyInfo,
  type CreateOperatorApiKeyRequest,
  type CreateTenantWorkspaceRequest,
  type CreatedTenantWorkspace,
  type MintedApiKey,
  type OperatorApiKeyList,
} from '@mnemo/contract';
import {
  createTenantWorkspace,
  listOperatorKeys,
  mintOperatorKey,
  revokeOperatorKey,
} from '../services/api-keys/admin.js';
import { keyAdminPorts, type KeyAdminContext, type OperatorCaller } from './context.js';
import { defineOperation } from './operation.js';

// API keys and workspaces made outside the console: by the operator (admin token) or by an
// API key of scope `admin`.

/** A key for any existing workspace, on the introductory rate (plaintext once). */
export const createApiKey = defineOperation<
  CreateOperatorApiKeyRequest,
  MintedApiKey,
  KeyAdminContext,
  OperatorCaller
>('createApiKey', contract.apiKeys.createApiKey, async (ctx, { input }) => ({
  output: await mintOperatorKey(keyAdminPorts(ctx), {
    workspaceId: input.workspace_id,
    name: input.name,
    scope: input.scope,
  }),
}));

export const listApiKeys = defineOperation<
  { workspace_id: string },
  OperatorApiKeyList,
  KeyAdminContext,
  OperatorCaller
>('listApiKeys', contract.apiKeys.listApiKeys, async (ctx, { input }) => ({
  output: await listOperatorKeys(keyAdminPorts(ctx), input.workspace_id),
}));

/** Revokes any key by id; revoking it again changes nothing. */
export const revokeApiKey = defineOperation<
  { id: string },
  { api_key: ApiKeyInfo },
  KeyAdminContext,
  OperatorCaller
>('revokeApiKey', contract.apiKeys.revokeApiKey, async (ctx, { input }) => ({
  output: await revokeOperatorKey(keyAdminPorts(ctx), input.id),
}));

/**
 * `POST /v1/workspaces` (an API key of scope `admin`): a new, independent workspace and its
 * first tenant key.
 */
export const createWorkspace = defineOperation<
  CreateTenantWorkspaceRequest,
  CreatedTenantWorkspace,
  KeyAdminContext
>('createWorkspace', contract.workspaces.createWorkspace, async (ctx, { caller, input }) => ({
  output: await createTenantWorkspace(keyAdminPorts(ctx), {
    name: input.name,
    createdBy: { workspaceId: caller.workspaceId, apiKeyId: caller.apiKeyId },
  }),
}));
