import type {
  CreatedApiKey,
  DashboardApiKey,
  DashboardWorkspace,
  OverviewStats,
  SessionData,
  WorkspaceList,
} from '@mnemo/contract';
import type { Database } from '../../db/client.js';
import {
  countLiveApiKeys,
  createOwnedWorkspace,
  firstOrNewOwnedWorkspace,
  ensureMembership,
  findMembership,
  getApiKeyById,
  listMemberWorkspaces,
  listWorkspaceApiKeys,
  revokeWorkspaceApiKey,
  workspaceCounts,
  type MemberWorkspace,
} from '../../db/queries/dashboard.js';
import type { ApiKey } from '../../db/schema/index.js';
import { lostAnswer } from '../../db/faults.js';
import { ServiceError } from '../../errors.js';
import type { ApiKeyService } from '../api-keys/index.js';
import { LOCAL_ADMIN_USER, type DashboardIdentity } from './identity.js';
import type { DashboardSessions, OpenedSession, SessionContext } from './sessions.js';
import { usageToday, type UsageDeps } from '../usage/index.js';

export interface DashboardDeps {
  db: Database;
  identity: DashboardIdentity;
  sessions: DashboardSessions;
  apiKeys: ApiKeyService;
  /** The usage service's view: the Overview shows the plan `GET /v1/usage/today` shows. */
  usage: UsageDeps;
  /** What one user may own through the console. */
  counts: { workspacesPerUser: number; keysPerWorkspace: number };
}

/** The name of the workspace made on a user's first sign-in when none is given. */
export const FIRST_WORKSPACE_NAME = 'My workspace';

function toWorkspace(row: MemberWorkspace): DashboardWorkspace {
  return { id: row.id, name: row.name, role: row.role, created_at: row.createdAt.toISOString() };
}

function toApiKey(row: ApiKey): DashboardApiKey {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** Spec: `workspace_id` must equal the session's workspace, else 403. */
function sameWorkspace(session: SessionContext, workspaceId: string | undefined): void {
  if (workspaceId !== undefined && workspaceId !== session.workspaceId) {
    throw new ServiceError('FORBIDDEN', "workspace_id does not match the session's workspace");
  }
}

/** The user's first workspace, or a new one they own. */
export async function bootstrap(
  deps: DashboardDeps,
  input: { accessToken: string; workspaceName?: string | undefined },
): Promise<{ workspace: { id: string; name: string }; created: boolean }> {
  const { userId } = await deps.identity.verify(input.accessToken);
  const [existing] = await listMemberWorkspaces(deps.db, userId);
  if (existing) return { workspace: { id: existing.id, name: existing.name }, created: false };
  // Checked again under a per-user lock: concurrent first sign-ins make one workspace.
  const { workspace, created } = await firstOrNewOwnedWorkspace(deps.db, {
    name: input.workspaceName ?? FIRST_WORKSPACE_NAME,
    userId,
  });
  return { workspace: { id: workspace.id, name: workspace.name }, created };
}

/** Verifies the token and the membership, then stores a session for that workspace. */
export async function openSession(
  deps: DashboardDeps,
  input: { accessToken: string; workspaceId: string },
): Promise<{ opened: OpenedSession; data: SessionData }> {
  const { userId } = await deps.identity.verify(input.accessToken);
  const membership = await findMembership(deps.db, userId, input.workspaceId);
  if (!membership) throw new ServiceError('FORBIDDEN', 'You are not a member of this workspace');
  const opened = await deps.sessions.open({ userId, workspaceId: membership.id });
  return {
    opened,
    data: {
      csrf_token: opened.csrfToken,
      expires_at: opened.expiresAt.toISOString(),
      user: { id: userId },
      workspace: toWorkspace(membership),
    },
  };
}

export async function listWorkspaces(
  deps: DashboardDeps,
  session: SessionContext,
): Promise<WorkspaceList> {
  const rows = await listMemberWorkspaces(deps.db, session.userId);
  return { workspaces: rows.map(toWorkspace), current_workspace_id: session.workspaceId };
}

export async function createWorkspace(
  deps: DashboardDeps,
  session: SessionContext,
  name: string,
): Promise<{ workspace: DashboardWorkspace }> {
  const made = await createOwnedWorkspace(deps.db, {
    name,
    userId: session.userId,
    maxOwned: deps.counts.workspacesPerUser,
  });
  if (!made) {
    throw new ServiceError(
      'CAP_EXCEEDED',
      `A user may own at most ${deps.counts.workspacesPerUser} workspaces`,
      { workspaces: [`at most ${deps.counts.workspacesPerUser} per user`] },
    );
  }
  return { workspace: toWorkspace(made) };
}

export async function listApiKeys(
  deps: DashboardDeps,
  session: SessionContext,
  workspaceId: string | undefined,
): Promise<{ api_keys: DashboardApiKey[] }> {
  sameWorkspace(session, workspaceId);
  const rows = await listWorkspaceApiKeys(deps.db, session.workspaceId);
  return { api_keys: rows.map(toApiKey) };
}

export async function createApiKey(
  deps: DashboardDeps,
  session: SessionContext,
  input: { workspaceId: string; name: string },
): Promise<CreatedApiKey> {
  sameWorkspace(session, input.workspaceId);
  const live = await countLiveApiKeys(deps.db, session.workspaceId);
  if (live >= deps.counts.keysPerWorkspace) {
    throw new ServiceError(
      'CAP_EXCEEDED',
      `A workspace may hold at most ${deps.counts.keysPerWorkspace} live API keys; revoke one first`,
      { api_keys: [`at most ${deps.counts.keysPerWorkspace} live keys per workspace`] },
    );
  }
  const minted = await deps.apiKeys.mint(session.workspaceId, input.name);
  const row = await getApiKeyById(deps.db, minted.id);
  if (!row) throw lostAnswer('minted API key');
  return { api_key: toApiKey(row), key: minted.plaintext };
}

/** Revokes a key of the session's workspace; any other key id is 403 (nothing is changed). */
export async function revokeApiKey(
  deps: DashboardDeps,
  session: SessionContext,
  apiKeyId: string,
): Promise<{ api_key: DashboardApiKey }> {
  const row = await revokeWorkspaceApiKey(deps.db, session.workspaceId, apiKeyId);
  if (!row) {
    throw new ServiceError('FORBIDDEN', "No such API key in the session's workspace");
  }
  await deps.apiKeys.forget(row.id);
  return { api_key: toApiKey(row) };
}

export async function overviewStats(
  deps: DashboardDeps,
  session: SessionContext,
): Promise<OverviewStats> {
  const membership = await findMembership(deps.db, session.userId, session.workspaceId);
  if (!membership)
    throw new ServiceError('FORBIDDEN', 'You are no longer a member of this workspace');
  const [counts, usage] = await Promise.all([
    workspaceCounts(deps.db, session.workspaceId),
    usageToday(deps.usage, session.workspaceId),
  ]);
  return {
    // The effective plan (entitlement or internal grant), not the workspace row's label.
    workspace: { id: membership.id, name: membership.name, plan: usage.plan },
    user: { id: session.userId },
    memories: counts.memories,
    api_keys: counts.apiKeys,
    requests_24h: counts.requests24h,
    session_expires_at: session.expiresAt.toISOString(),
  };
}

/**
 * Self-hosting without an identity provider: the local admin is a member of the bootstrap
 * workspace, and a sign-in link carries a short-lived token signed with the server's own
 * secret. Undefined when tokens come from elsewhere (a configured secret or a JWKS).
 */
export async function localSignInLink(
  deps: DashboardDeps,
  input: { workspaceId: string | undefined; baseUrl: string; ttlMs: number },
): Promise<string | undefined> {
  if (deps.identity.mode !== 'local') return undefined;
  if (input.workspaceId) {
    await ensureMembership(deps.db, {
      workspaceId: input.workspaceId,
      userId: LOCAL_ADMIN_USER,
      role: 'owner',
    });
  }
  const token = await deps.identity.signToken(LOCAL_ADMIN_USER, input.ttlMs);
  return `${input.baseUrl}/console/#token=${token}`;
}
