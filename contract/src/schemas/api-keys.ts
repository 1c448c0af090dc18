import { z } from 'zod';
import { PgString } from './common.js';

/** What an API key may do: `tenant`, its workspace's routes; `admin`, also POST /v1/workspaces. */
export const API_KEY_SCOPES = ['tenant', 'admin'] as const;
export const ApiKeyScope = z.enum(API_KEY_SCOPES);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/** A workspace or key name: trimmed, 1 to 100 characters. */
const Name = PgString.pipe(z.string().trim().min(1).max(100));

/** An API key as listed: never its plaintext or hash. */
export const ApiKeyInfo = z.object({
  id: z.string().uuid(),
  workspace_id: z.string().uuid(),
  name: z.string(),
  /** The first characters of the key, to recognise it. */
  key_prefix: z.string(),
  scope: ApiKeyScope,
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  /** Until then the key has the introductory rate (15 requests per minute); null: none. */
  introductory_until: z.string().nullable(),
});
export type ApiKeyInfo = z.infer<typeof ApiKeyInfo>;

export const CreateOperatorApiKeyRequest = z
  .object({ workspace_id: z.string().uuid(), name: Name, scope: ApiKeyScope.default('tenant') })
  .strict();
export type CreateOperatorApiKeyRequest = z.infer<typeof CreateOperatorApiKeyRequest>;

export const MintedApiKey = z.object({
  api_key: ApiKeyInfo,
  /** The plaintext key: in this response only, never again. */
  key: z.string(),
});
export type MintedApiKey = z.infer<typeof MintedApiKey>;

export const ListOperatorApiKeysQuery = z.object({ workspace_id: z.string().uuid() }).strict();

export const OperatorApiKeyList = z.object({ api_keys: z.array(ApiKeyInfo) });
export type OperatorApiKeyList = z.infer<typeof OperatorApiKeyList>;

export const ApiKeyIdParams = z.object({ id: z.string().uuid() });

export const RevokedOperatorApiKey = z.object({ api_key: ApiKeyInfo });

export const CreateTenantWorkspaceRequest = z.object({ name: Name }).strict();
export type CreateTenantWorkspaceRequest = z.infer<typeof CreateTenantWorkspaceRequest>;

export const TenantWorkspace = z.object({
  id: z.string().uuid(),
  name: z.string(),
  plan: z.string(),
  created_at: z.string(),
});

/** `POST /v1/workspaces`: the new workspace and its first (tenant) key, plaintext shown once. */
export const CreatedTenantWorkspace = z.object({
  workspace: TenantWorkspace,
  api_key: ApiKeyInfo,
  key: z.string(),
});
export type CreatedTenantWorkspace = z.infer<typeof CreatedTenantWorkspace>;
