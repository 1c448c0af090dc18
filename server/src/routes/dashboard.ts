import { contract, DASHBOARD_SESSION_COOKIE } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { dashboardSessionAuth } from '../http/auth.js';
import { clearSessionCookies, setSessionCookies, readCookie } from '../http/cookies.js';
import { mountContract } from '../http/mount.js';
import { dashboardSessionCallerOf, dashboardTokenCallerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

/** The operations behind the console's routes. */
export type DashboardOperations = Pick<
  Operations,
  | 'bootstrapDashboard'
  | 'createDashboardSession'
  | 'logoutDashboard'
  | 'getOverviewStats'
  | 'listDashboardWorkspaces'
  | 'createDashboardWorkspace'
  | 'listDashboardApiKeys'
  | 'createDashboardApiKey'
  | 'revokeDashboardApiKey'
>;

const s = initServer();

const ok = <T>(data: T) => ({ status: 200 as const, body: { ok: true as const, data } });

/**
 * The spec's nine /v1/dashboard/* routes; every failure leaves in the dashboard envelope. The
 * door reads and sets the session cookies and checks the session (CSRF on mutations); the
 * operations do the rest.
 */
export function mountDashboardRoutes(
  target: IRouter,
  table: RouteTable,
  operations: DashboardOperations,
  /** The session check's store: one per app, shared with tenant session auth. */
  sessions: Parameters<typeof dashboardSessionAuth>[0]['sessions'],
  /** Per-address request limits, before the session check. */
  limits: RequestHandler[] = [],
): void {
  const implementation = s.router(contract.dashboard, {
    bootstrapDashboard: async ({ req, body }) =>
      ok(await operations.bootstrapDashboard(dashboardTokenCallerOf(req), body)),
    createDashboardSession: async ({ body, req, res }) => {
      const { opened, data } = await operations.createDashboardSession(
        dashboardTokenCallerOf(req),
        // Switching workspace: the browser's previous session ends with this one's start.
        { ...body, previousSessionToken: readCookie(req, DASHBOARD_SESSION_COOKIE) },
      );
      setSessionCookies(req, res, opened);
      return ok(data);
    },
    logoutDashboard: async ({ req, res }) => {
      await operations.logoutDashboard(dashboardSessionCallerOf(req), {
        sessionToken: readCookie(req, DASHBOARD_SESSION_COOKIE),
      });
      clearSessionCookies(req, res);
      return { status: 200, body: { ok: true as const } };
    },
    getOverviewStats: async ({ req }) =>
      ok(await operations.getOverviewStats(dashboardSessionCallerOf(req), undefined)),
    listDashboardWorkspaces: async ({ req }) =>
      ok(await operations.listDashboardWorkspaces(dashboardSessionCallerOf(req), undefined)),
    createDashboardWorkspace: async ({ req, body }) =>
      ok(await operations.createDashboardWorkspace(dashboardSessionCallerOf(req), body)),
    listDashboardApiKeys: async ({ req, query }) =>
      ok(await operations.listDashboardApiKeys(dashboardSessionCallerOf(req), query)),
    createDashboardApiKey: async ({ req, body }) =>
      ok(await operations.createDashboardApiKey(dashboardSessionCallerOf(req), body)),
    revokeDashboardApiKey: async ({ req, body }) =>
      ok(await operations.revokeDashboardApiKey(dashboardSessionCallerOf(req), body)),
  });
  mountContract(target, table, contract.dashboard, implementation, [
    ...limits,
    dashboardSessionAuth({ sessions }),
  ]);
}
