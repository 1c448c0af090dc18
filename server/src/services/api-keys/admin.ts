import type {
  ApiKeyInfo,
  ApiKeyScope,
  CreatedTenantWorkspace,
  MintedApiKey,
  OperatorApiKeyList,
} from '@mnemo/contract';
import type { Database } from '../../db/client.js';
import { insertApiKey, revokeApiKeyById } from '../../db/queries/api-keys.js';
import { getApiKeyById, listWorkspaceApiKeys } from '../../db/queries/dashboard.js';
import { createWorkspace, getWorkspaceById } from '../../db/queries/workspaces.js';
import type { ApiKey } from '../../db/schema/index.js';
import { lostAnswer } from '../../db/faults.js';
import { ServiceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { API_KEY_PREFIX, ApiKeyService, INTRODUCTORY_PERIOD_MS } from './index.js';

export interface KeyAdminDeps {
  db: Database;
  apiKeys: ApiKeyService;
  logger: Logger;
}

export function toApiKeyInfo(row: ApiKey): ApiKeyInfo {
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    name: row.name,
    key_prefix: row.keyPrefix,
    scope: row.scope,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    introductory_until: row.introductoryUntil?.toISOString() ?? null,
  };
}

/** Whether the workspace exists (an internal subrequest must name one). */
export async function workspaceExists(db: Database, workspaceId: string): Promise<boolean> {
  return (await getWorkspaceById(db, workspaceId)) !== undefined;
}

async function requireWorkspace(db: Database, workspaceId: string): Promise<void> {
  if (!(await getWorkspaceById(db, workspaceId))) {
    throw new ServiceError('NOT_FOUND', 'Workspace not found');
  }
}

/**
 * `POST /v1/api-keys` (admin token): a key for any existing workspace, on the introductory rate
 * (15 requests per minute) for its first 48 hours. The plaintext is returned here only.
 */
export async function mintOperatorKey(
  deps: KeyAdminDeps,
  input: { workspaceId: string; name: string; scope: ApiKeyScope },
): Promise<MintedApiKey> {
  await requireWorkspace(deps.db, input.workspaceId);
  const minted = await deps.apiKeys.mint(input.workspaceId, input.name, {
    introductory: true,
    scope: input.scope,
  });
  const row = await getApiKeyById(deps.db, minted.id);
  if (!row) throw lostAnswer('minted API key');
  deps.logger.info(
    { workspace_id: row.workspaceId, api_key_id: row.id, scope: row.scope },
    'operator minted an API key',
  );
  return { api_key: toApiKeyInfo(row), key: minted.plaintext };
}

export async function listOperatorKeys(
  deps: KeyAdminDeps,
  workspaceId: string,
): Promise<OperatorApiKeyList> {
  await requireWorkspace(deps.db, workspaceId);
  return { api_keys: (await listWorkspaceApiKeys(deps.db, workspaceId)).map(toApiKeyInfo) };
}

/** Revokes any key by id (404 when there is none); a revoked key stays revoked as it was. */
export async function revokeOperatorKey(
  deps: KeyAdminDeps,
  apiKeyId: string,
): Promise<{ api_key: ApiKeyInfo }> {
  const row = await revokeApiKeyById(deps.db, apiKeyId);
  if (!row) throw new ServiceError('NOT_FOUND', 'API key not found');
  await deps.apiKeys.forget(row.id);
  return { api_key: toApiKeyInfo(row) };
}

/**
 * `POST /v1/workspaces` (admin-scoped API key): a new, independent workspace and its first
 * tenant key, in one transaction. The new workspace is not tied to the caller's: there is no
 * organisation model, so the caller's key gets no access to it; the returned key is the way in
 * (plaintext shown once). Like every operator-minted key it starts on the introductory rate.
 */
export async function createTenantWorkspace(
  deps: KeyAdminDeps,
  input: { name: string; createdBy: { workspaceId: string; apiKeyId: string | null } },
): Promise<CreatedTenantWorkspace> {
  const plaintext = ApiKeyService.generate();
  const { workspace, key } = await deps.db.transaction(async (tx) => {
    const workspace = await createWorkspace(tx, { name: input.name });
    const key = await insertApiKey(tx, {
      workspaceId: workspace.id,
      name: 'first key',
      keyHash: deps.apiKeys.hash(plaintext),
      keyPrefix: plaintext.slice(0, API_KEY_PREFIX.length + 4),
      introductoryUntil: new Date(Date.now() + INTRODUCTORY_PERIOD_MS),
      scope: 'tenant',
    });
    return { workspace, key };
  });
  deps.logger.info(
    {
      workspace_id: workspace.id,
      created_by_workspace_id: input.createdBy.workspaceId,
      created_by_api_key_id: input.createdBy.apiKeyId,
    },
    'admin-scoped key created a workspace',
  );
  return {
    workspace: {
      id: workspace.id,
      name: workspace.name,
      plan: workspace.plan,
      created_at: workspace.createdAt.toISOString(),
    },
    api_key: toApiKeyInfo(key),
    key: plaintext,
  };
}
