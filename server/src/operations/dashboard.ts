import {
  contract,
  type BootstrapRequest,
  type CreatedApiKey,
  type DashboardApiKey,
  type DashboardWorkspace,
  type OverviewStats,
  type SessionData,
  type SessionRequest,
  type WorkspaceList,
} from '@mnemo/contract';
import {
  bootstrap,
  createApiKey,
  createWorkspace,
  listApiKeys,
  listWorkspaces,
  openSession,
  overviewStats,
  revokeApiKey,
} from '../services/dashboard/index.js';
import type { OpenedSession } from '../services/dashboard/sessions.js';
import {
  dashboardPorts,
  type DashboardContext,
  type DashboardSessionCaller,
  type DashboardTokenCaller,
  type OperationContext,
} from './context.js';
import { defineOperation } from './operation.js';

// The browser console's use cases (`/v1/dashboard/*`). The door keeps what is HTTP: it reads the
// session cookie, checks CSRF and sets or clears the cookies; everything else happens here.

/** The user's first workspace, or a new one they own (an identity token in the body). */
export const bootstrapDashboard = defineOperation<
  BootstrapRequest,
  { workspace: { id: string; name: string }; created: boolean },
  DashboardContext,
  DashboardTokenCaller
>('bootstrapDashboard', contract.dashboard.bootstrapDashboard, async (ctx, { input }) => ({
  output: await bootstrap(dashboardPorts(ctx), {
    accessToken: input.access_token,
    workspaceName: input.workspace_name,
  }),
}));

/**
 * Opens a session for a workspace the token's user belongs to. A session the browser held
 * before (switching workspace) ends once the new one is stored.
 */
export const createDashboardSession = defineOperation<
  SessionRequest & {
    /** The session cookie the request carried, if any. */
    previousSessionToken: string | undefined;
  },
  { opened: OpenedSession; data: SessionData },
  DashboardContext,
  DashboardTokenCaller
>('createDashboardSession', contract.dashboard.createDashboardSession, async (ctx, { input }) => {
  const output = await openSession(dashboardPorts(ctx), {
    accessToken: input.access_token,
    workspaceId: input.workspace_id,
  });
  if (input.previousSessionToken) await ctx.console.sessions.close(input.previousSessionToken);
  return { output };
});

/** Ends the caller's session (its cookie's token). */
export const logoutDashboard = defineOperation<
  { sessionToken: string | undefined },
  { ok: true },
  Pick<OperationContext, 'console'>,
  DashboardSessionCaller
>('logoutDashboard', contract.dashboard.logoutDashboard, async (ctx, { input }) => {
  if (input.sessionToken) await ctx.console.sessions.close(input.sessionToken);
  return { output: { ok: true } };
});

export const getOverviewStats = defineOperation<
  undefined,
  OverviewStats,
  DashboardContext,
  DashboardSessionCaller
>('getOverviewStats', contract.dashboard.getOverviewStats, async (ctx, { caller }) => ({
  output: await overviewStats(dashboardPorts(ctx), caller.session),
}));

export const listDashboardWorkspaces = defineOperation<
  undefined,
  WorkspaceList,
  DashboardContext,
  DashboardSessionCaller
>(
  'listDashboardWorkspaces',
  contract.dashboard.listDashboardWorkspaces,
  async (ctx, { caller }) => ({
    output: await listWorkspaces(dashboardPorts(ctx), caller.session),
  }),
);

/** A workspace owned by the signed-in user, within the per-user bound. */
export const createDashboardWorkspace = defineOperation<
  { name: string },
  { workspace: DashboardWorkspace },
  DashboardContext,
  DashboardSessionCaller
>(
  'createDashboardWorkspace',
  contract.dashboard.createDashboardWorkspace,
  async (ctx, { caller, input }) => ({
    output: await createWorkspace(dashboardPorts(ctx), caller.session, input.name),
  }),
);

export const listDashboardApiKeys = defineOperation<
  { workspace_id?: string | undefined },
  { api_keys: DashboardApiKey[] },
  DashboardContext,
  DashboardSessionCaller
>(
  'listDashboardApiKeys',
  contract.dashboard.listDashboardApiKeys,
  async (ctx, { caller, input }) => ({
    output: await listApiKeys(dashboardPorts(ctx), caller.session, input.workspace_id),
  }),
);

/** Mints a key for the session's workspace, within the per-workspace bound (plaintext once). */
export const createDashboardApiKey = defineOperation<
  { workspace_id: string; name: string },
  CreatedApiKey,
  DashboardContext,
  DashboardSessionCaller
>(
  'createDashboardApiKey',
  contract.dashboard.createDashboardApiKey,
  async (ctx, { caller, input }) => ({
    output: await createApiKey(dashboardPorts(ctx), caller.session, {
      workspaceId: input.workspace_id,
      name: input.name,
    }),
  }),
);

export const revokeDashboardApiKey = defineOperation<
  { api_key_id: string },
  { api_key: DashboardApiKey },
  DashboardContext,
  DashboardSessionCaller
>(
  'revokeDashboardApiKey',
  contract.dashboard.revokeDashboardApiKey,
  async (ctx, { caller, input }) => ({
    output: await revokeApiKey(dashboardPorts(ctx), caller.session, input.api_key_id),
  }),
);
