import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { dashboardSessionAuth, requireSession } from '../http/auth.js';
import { clearSessionCookies, setSessionCookies, readCookie } from '../http/cookies.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { DASHBOARD_SESSION_COOKIE } from '@mnemo/contract';
import {
  bootstrap,
  createApiKey,
  createWorkspace,
  listApiKeys,
  listWorkspaces,
  openSession,
  overviewStats,
  revokeApiKey,
  type DashboardDeps,
} from '../services/dashboard/index.js';

const s = initServer();

const ok = <T>(data: T) => ({ status: 200 as const, body: { ok: true as const, data } });

/** The spec's nine /v1/dashboard/* routes; every failure leaves in the dashboard envelope. */
export function mountDashboardRoutes(
  target: IRouter,
  table: RouteTable,
  /** The dashboard's services: one per app, its sessions shared with tenant session auth. */
  dash: DashboardDeps,
  /** Per-address request limits, before the session check. */
  limits: RequestHandler[] = [],
): void {
  const implementation = s.router(contract.dashboard, {
    bootstrapDashboard: async ({ body }) =>
      ok(
        await bootstrap(dash, {
          accessToken: body.access_token,
          workspaceName: body.workspace_name,
        }),
      ),
    createDashboardSession: async ({ body, req, res }) => {
      const { opened, data } = await openSession(dash, {
        accessToken: body.access_token,
        workspaceId: body.workspace_id,
      });
      // Switching workspace: the browser's previous session ends here.
      const previous = readCookie(req, DASHBOARD_SESSION_COOKIE);
      if (previous) await dash.sessions.close(previous);
      setSessionCookies(req, res, opened);
      return ok(data);
    },
    logoutDashboard: async ({ req, res }) => {
      requireSession(req);
      const token = readCookie(req, DASHBOARD_SESSION_COOKIE);
      if (token) await dash.sessions.close(token);
      clearSessionCookies(req, res);
      return { status: 200, body: { ok: true as const } };
    },
    getOverviewStats: async ({ req }) => ok(await overviewStats(dash, requireSession(req))),
    listDashboardWorkspaces: async ({ req }) => ok(await listWorkspaces(dash, requireSession(req))),
    createDashboardWorkspace: async ({ req, body }) =>
      ok(await createWorkspace(dash, requireSession(req), body.name)),
    listDashboardApiKeys: async ({ req, query }) =>
      ok(await listApiKeys(dash, requireSession(req), query.workspace_id)),
    createDashboardApiKey: async ({ req, body }) =>
      ok(
        await createApiKey(dash, requireSession(req), {
          workspaceId: body.workspace_id,
          name: body.name,
        }),
      ),
    revokeDashboardApiKey: async ({ req, body }) =>
      ok(await revokeApiKey(dash, requireSession(req), body.api_key_id)),
  });
  mountContract(target, table, contract.dashboard, implementation, [
    ...limits,
    dashboardSessionAuth({ sessions: dash.sessions }),
  ]);
}
