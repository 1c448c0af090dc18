import { z } from 'zod';
import { ERROR_CODES } from '../errors.js';
import { PgString } from './common.js';

/**
 * Dashboard routes answer in their own envelope (the spec's Dashboard section): success is
 * `{ok: true, data}`, failure `{ok: false, error: {code, message, details?}}`.
 */
export const DashboardError = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    details: z.record(z.array(z.string())).optional(),
  }),
  /** Same value as the `x-request-id` header. */
  request_id: z.string().optional(),
});
export type DashboardError = z.infer<typeof DashboardError>;

/** `{ok: true, data}` around a payload schema. */
export function dashboardOk<T extends z.ZodTypeAny>(data: T) {
  return z.object({ ok: z.literal(true), data });
}

/** Cookie that carries the dashboard session id (HttpOnly; never readable by scripts). */
export const DASHBOARD_SESSION_COOKIE = 'svc_dash_session';
/** Cookie that carries the CSRF token, readable by the console (double submit). */
export const DASHBOARD_CSRF_COOKIE = 'svc_dash_csrf';
/** Header a session-authenticated mutation must carry, equal to the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

export const WORKSPACE_ROLES = ['owner', 'admin', 'member'] as const;
export const WorkspaceRole = z.enum(WORKSPACE_ROLES);
export type WorkspaceRole = z.infer<typeof WorkspaceRole>;

const AccessToken = z.string().min(1).max(16_384);
const Name = PgString.pipe(z.string().trim().min(1).max(100));

export const BootstrapRequest = z
  .object({ access_token: AccessToken, workspace_name: Name.optional() })
  .strict();
export type BootstrapRequest = z.infer<typeof BootstrapRequest>;

export const DashboardWorkspace = z.object({
  id: z.string().uuid(),
  name: z.string(),
  role: WorkspaceRole,
  created_at: z.string(),
});
export type DashboardWorkspace = z.infer<typeof DashboardWorkspace>;

export const BootstrapData = z.object({
  workspace: z.object({ id: z.string().uuid(), name: z.string() }),
  /** True when this call created the workspace (the user had none). */
  created: z.boolean(),
});

export const SessionRequest = z
  .object({ access_token: AccessToken, workspace_id: z.string().uuid() })
  .strict();
export type SessionRequest = z.infer<typeof SessionRequest>;

export const SessionData = z.object({
  /** Send it back as `x-csrf-token` on every mutation made with this session. */
  csrf_token: z.string(),
  expires_at: z.string(),
  user: z.object({ id: z.string() }),
  workspace: DashboardWorkspace,
});
export type SessionData = z.infer<typeof SessionData>;

export const LogoutResponse = z.object({ ok: z.literal(true) });

export const OverviewStats = z.object({
  workspace: z.object({ id: z.string().uuid(), name: z.string(), plan: z.string() }),
  user: z.object({ id: z.string() }),
  memories: z.object({
    total: z.number().int(),
    active: z.number().int(),
    replaced: z.number().int(),
    archived: z.number().int(),
  }),
  api_keys: z.object({ active: z.number().int(), revoked: z.number().int() }),
  /** Requests recorded in the audit log over the last 24 hours. */
  requests_24h: z.number().int(),
  session_expires_at: z.string(),
});
export type OverviewStats = z.infer<typeof OverviewStats>;

export const WorkspaceList = z.object({
  workspaces: z.array(DashboardWorkspace),
  /** The session's workspace. */
  current_workspace_id: z.string().uuid(),
});
export type WorkspaceList = z.infer<typeof WorkspaceList>;

export const CreateWorkspaceRequest = z.object({ name: Name }).strict();
export const CreatedWorkspace = z.object({ workspace: DashboardWorkspace });

export const ApiKeyListQuery = z.object({ workspace_id: z.string().uuid().optional() }).strict();

export const DashboardApiKey = z.object({
  id: z.string().uuid(),
  name: z.string(),
  /** The first characters of the key, to recognise it. */
  key_prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type DashboardApiKey = z.infer<typeof DashboardApiKey>;

export const ApiKeyList = z.object({ api_keys: z.array(DashboardApiKey) });

export const CreateApiKeyRequest = z
  .object({ workspace_id: z.string().uuid(), name: Name })
  .strict();
export const CreatedApiKey = z.object({
  api_key: DashboardApiKey,
  /** The plaintext key: returned by this response only, never again. */
  key: z.string(),
});
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

export const RevokeApiKeyRequest = z.object({ api_key_id: z.string().uuid() }).strict();
export const RevokedApiKey = z.object({ api_key: DashboardApiKey });

/** `POST /admin/sessions/cleanup`. */
export const SessionCleanupReport = z.object({ deleted: z.number().int().min(0) });
